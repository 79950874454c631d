package engine

import (
	"context"
	"errors"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// clientService is ClientService: how people and programs drive the engine.
type clientService struct {
	pb.UnimplementedClientServiceServer
	e *Engine
}

// SendMessage streams the message's events and ends after RESPONSE_COMPLETE
// or ERROR. Refusals (no agent, busy, bad message) are an ERROR event, as
// the public engine sends them.
func (c *clientService) SendMessage(req *pb.ClientMessageRequest, stream pb.ClientService_SendMessageServer) error {
	t, err := c.e.Submit(stream.Context(), Message{SessionID: req.GetSessionId(), Content: req.GetContent(), Mode: req.GetMode(), Source: req.GetSource()})
	if err != nil {
		var ce *CodedError
		if !errors.As(err, &ce) {
			ce = &CodedError{Code: "INTERNAL", Msg: err.Error()}
		}
		ev := errorEvent(ce.Code, ce.Msg, ce.Code == ErrAgentBusy.Code || ce.Code == ErrAgentUnavailable.Code)
		ev.SessionId = req.GetSessionId()
		return stream.Send(ev)
	}
	for ev := range t.Events {
		if err := stream.Send(ev); err != nil {
			// The client went away: the turn is cancelled through its
			// context; drain the rest so the forwarder is not stuck.
			go func() {
				for range t.Events {
				}
			}()
			return err
		}
	}
	return nil
}

// WatchSession follows a session (or every session for "") until the
// client leaves.
func (c *clientService) WatchSession(req *pb.WatchSessionRequest, stream pb.ClientService_WatchSessionServer) error {
	if id := req.GetSessionId(); id != "" && !c.e.hasSession(id) {
		return status.Errorf(codes.NotFound, "no session %q", id)
	}
	sub := c.e.Subscribe(req.GetSessionId())
	defer sub.Close()
	// Headers tell the client it is subscribed: nothing published from
	// here on is missed.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	// A watcher that arrives while a call waits for a human still gets
	// to answer it. An approval opened as the watcher subscribed is in
	// this list and also on its way through sub: announced keeps the
	// second copy from being sent.
	announced := make(map[string]bool)
	for _, ev := range c.e.approvals.announcements(req.GetSessionId()) {
		announced[ev.GetApprovalNeeded().GetApprovalId()] = true
		if err := stream.Send(ev); err != nil {
			return err
		}
	}
	for {
		select {
		case ev, ok := <-sub.Events:
			if !ok {
				return status.Error(codes.ResourceExhausted, "watcher fell too far behind and was dropped")
			}
			if id := ev.GetApprovalNeeded().GetApprovalId(); id != "" && announced[id] {
				delete(announced, id) // each approval is published once
				continue
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		case <-stream.Context().Done():
			return nil
		}
	}
}

// ResolveApproval answers a pending escalation. The answer is attributed
// to the front-end named in the x-parapet-frontend metadata ("grpc" when
// absent), so the audit chain can tell a web click from a CLI answer.
func (c *clientService) ResolveApproval(ctx context.Context, req *pb.ApprovalResponse) (*pb.ApprovalAck, error) {
	if req.GetApprovalId() == "" {
		return nil, status.Error(codes.InvalidArgument, "approval_id is empty")
	}
	err := c.e.ResolveApproval(req.GetApprovalId(), req.GetSessionId(), req.GetApproved(), frontend(ctx))
	if errors.Is(err, ErrApprovalNotFound) {
		return nil, status.Errorf(codes.NotFound, "approval %q: %v", textcut.Truncate(req.GetApprovalId(), 80), err)
	}
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pb.ApprovalAck{Received: true}, nil
}

// FrontendMetadataKey names the front-end a client speaks for ("http",
// "cli", ...); it is recorded as who resolved an approval.
const FrontendMetadataKey = "x-parapet-frontend"

func frontend(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(FrontendMetadataKey); len(v) > 0 && validFrontend(v[0]) {
		return v[0]
	}
	return "grpc"
}

// validFrontend keeps the name short and plain: it ends up in events and
// in the shield's audit chain.
func validFrontend(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}

// GetStatus reports the engine as it is now.
func (c *clientService) GetStatus(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return c.e.Status(), nil
}

// Shutdown asks the process running the engine to stop it cleanly.
func (c *clientService) Shutdown(_ context.Context, req *pb.ShutdownRequest) (*pb.ShutdownResponse, error) {
	c.e.log.Info("shutdown requested by a client", "reason", req.GetReason(), "restart", req.GetRestart())
	if req.GetRestart() {
		c.e.RequestRestart()
	}
	c.e.RequestShutdown()
	return &pb.ShutdownResponse{Accepted: true}, nil
}

// ListSessions lists sessions (see Engine.Sessions).
func (c *clientService) ListSessions(ctx context.Context, req *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	list, total, err := c.e.Sessions(ctx, int(req.GetOffset()), int(req.GetLimit()))
	if err != nil {
		return nil, sessionStatus(err)
	}
	return &pb.ListSessionsResponse{Sessions: list, Total: int32(total)}, nil
}

// GetHistory returns a session's messages, oldest first (see Engine.History).
func (c *clientService) GetHistory(ctx context.Context, req *pb.GetHistoryRequest) (*pb.GetHistoryResponse, error) {
	msgs, total, err := c.e.History(ctx, req.GetSessionId(), int(req.GetOffset()), int(req.GetLimit()))
	if err != nil {
		return nil, sessionStatus(err)
	}
	return &pb.GetHistoryResponse{Messages: msgs, Total: int32(total)}, nil
}

func page[T any](all []T, offset, limit int) []T {
	if offset >= len(all) {
		return nil
	}
	all = all[offset:]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all
}

// Status is a snapshot for GetStatus and agentctl status.
func (e *Engine) Status() *pb.StatusResponse {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := &pb.StatusResponse{
		Version: e.cfg.Version, AgentConnected: e.agent != nil, AgentName: e.cfg.AgentName, Workspace: e.cfg.Workspace,
		EnginePid: int64(os.Getpid()), AgentPid: e.agentPID.Load(), SandboxStatus: e.sandboxStatus,
		ExecutorStatus: e.cfg.ExecutorStatus,
		ShieldMode:     e.cfg.ShieldMode, ShieldAddress: e.cfg.ShieldAddress, ActiveSessions: int32(e.activeSessionsLocked()),
		UptimeSeconds: int64(time.Since(e.started).Seconds()), AgentRestarts: e.agentRestarts.Load(),
		Provider: e.cfg.Provider, Model: e.cfg.Model, GrpcAddress: e.grpcAddr, WebUrl: e.webURL,
		PendingApprovals: int32(e.approvals.count()), SubAgentsRunning: int32(e.subAgents.count()),
	}
	return st
}
