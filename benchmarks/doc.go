// Package benchmarks holds Parapet's performance benchmarks: in-process
// pipeline benchmarks (uncached, cache hit, per-action latency
// distribution, canonicalisation) and a gRPC pair over loopback comparing
// Evaluate with the health check. The load generator lives in loadgen/,
// the cache memory probe in cachemem/; README.md says how to run them and
// what the targets are.
package benchmarks
