# The load generator (benchmarks/loadgen) from scratch: one static binary
# (CGO_ENABLED=0), nothing pulled. `make images` builds both:
#   docker build -f deploy/loadgen.Dockerfile bin/images/loadgen
FROM scratch
COPY loadgen /loadgen
USER 65534:65534
ENTRYPOINT ["/loadgen"]
