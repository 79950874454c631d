package host

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/web"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func WebAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "web-addr", Value: "127.0.0.1:0",
		Usage: "serve the web page and HTTP API on this loopback `HOST:PORT` (port 0: any free port; off: no web server)"}
}

// checkWebAddr accepts "off" or a loopback HOST:PORT. The web API has no
// user authentication (see engine/web), so it never listens where other
// machines can reach it.
func checkWebAddr(addr string) error {
	if addr == "" || addr == "off" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return exitcode.Usagef("--web-addr %q: want a loopback HOST:PORT, or off", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return exitcode.Usagef("--web-addr %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if ip, err := netip.ParseAddr(host); host == "localhost" || (err == nil && ip.IsLoopback()) {
		return nil
	}
	return exitcode.Usagef("--web-addr %q: the host must be loopback (127.0.0.1, [::1] or localhost): the web API has no user authentication", addr)
}

// ServeWeb serves the web page and HTTP API on addr. Like any other
// client it reaches the engine over the engine's own gRPC listener, so it
// goes through the same validation and approval broker. It returns what
// to report on the WEB line; when it cannot listen the engine runs on
// without it. stop may be called more than once.
func (h *Host) ServeWeb(addr string, log *slog.Logger) (st procman.WebStatus, stop func()) {
	stop = func() {}
	if addr == "" || addr == "off" {
		return procman.WebStatus{State: procman.WebDisabled}, stop
	}
	failed := func(err error) (procman.WebStatus, func()) {
		_, portText, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(portText)
		log.Error("web server not started; the engine runs without it", "addr", addr, "error", err)
		return procman.WebStatus{State: procman.WebFailed, Port: port, Error: err.Error()}, stop
	}
	conn, err := grpc.NewClient(h.lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(h.engine.ClientToken())))
	if err != nil {
		return failed(err)
	}
	srv, err := web.New(web.Options{Client: pb.NewClientServiceClient(conn), Token: h.engine.ClientToken(), Logger: log.With("component", "web")})
	if err != nil {
		conn.Close()
		return failed(err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		conn.Close()
		return failed(err)
	}
	go func() {
		if err := srv.Serve(lis); err != nil {
			log.Error("web server stopped", "error", err)
		}
	}()
	url := "http://" + lis.Addr().String()
	h.engine.SetAddresses(h.lis.Addr().String(), url)
	log.Info("serving the web page and HTTP API", "url", url)
	return procman.WebStatus{State: procman.WebEnabled, Port: lis.Addr().(*net.TCPAddr).Port}, sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		conn.Close()
	})
}
