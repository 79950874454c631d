# shieldd from scratch: one static binary (CGO_ENABLED=0), no shell, no
# package manager, nothing pulled. `make images` builds the binary into the
# build context and this image from it:
#   docker build -f deploy/shieldd.Dockerfile bin/images/shieldd
FROM scratch
COPY shieldd /shieldd
USER 65534:65534
EXPOSE 7700 7701
ENTRYPOINT ["/shieldd"]
CMD ["serve"]
