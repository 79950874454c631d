# shieldd from scratch: one static binary (CGO_ENABLED=0), no shell, no
# package manager, nothing pulled. `make images` builds the binary and an
# empty log directory into the build context and this image from them:
#   docker build -f deploy/shieldd.Dockerfile bin/images/shieldd
# /var/log/shieldd belongs to shieldd's user, for --audit-file (compose
# mounts a volume there, which starts as a copy of it).
FROM scratch
COPY --chown=65534:65534 log/ /var/log/
COPY shieldd /shieldd
USER 65534:65534
EXPOSE 7700 7701
ENTRYPOINT ["/shieldd"]
CMD ["serve"]
