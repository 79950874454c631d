package mcpproxy_test
func runHTTPServer() {}
