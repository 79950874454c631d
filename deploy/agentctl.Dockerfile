# agentctl from scratch, the engine service of docker-compose.yaml: one
# static binary (CGO_ENABLED=0), nothing pulled. `make images` puts the
# binary and the empty directories the engine needs into the build context:
#   docker build -f deploy/agentctl.Dockerfile bin/images/agentctl
# A scratch image has no /tmp, where the engine makes its canary and probe
# directories: it comes from the context, mode 1777. The workspace and the
# session database's directory belong to the engine's user; compose mounts
# volumes there, which start as copies of them.
FROM scratch
COPY rootfs/ /
COPY --chown=65534:65534 home/ /
COPY --chown=65534:65534 state/ /var/lib/
COPY agentctl /agentctl
USER 65534:65534
ENTRYPOINT ["/agentctl"]
CMD ["--help"]
