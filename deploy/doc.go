// Package deploy holds what runs Parapet in containers: the FROM-scratch
// Dockerfiles that `make images` builds, the files the root
// docker-compose.yaml mounts (compose/: tokens, the engine's script and
// crawbl key, demo values all), and the test that brings that stack up,
// sends one Chat and one Converse through the engine and finds them judged
// in the replicas' audit logs, then stops a shieldd replica under load and
// checks that no decision was lost (compose_test.go; `make compose-test`).
package deploy
