// Package deploy holds what runs Parapet in containers: the FROM-scratch
// Dockerfiles that `make images` builds, the files the root
// docker-compose.yaml mounts (compose/), and the test that brings that
// stack up, stops a shieldd replica under load and checks that no decision
// was lost (compose_test.go; `make compose-test`).
package deploy
