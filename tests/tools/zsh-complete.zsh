# zsh-complete.zsh DIR WORDS: prints what zsh's completion offers for WORDS,
# typed into an interactive zsh on a pty; compadd is wrapped to report.
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; RPROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __h; builtin compadd -A __h "$@"; (( $#__h )) && print -l -- "<""m>"$^__h; builtin compadd "$@"; }'
zpty -w z 'zstyle ":completion:*" menu no; unsetopt autolist listambiguous; bindkey "^I" complete-word; bindkey "^X" kill-whole-line'
zpty -n -w z "$2"$'\t'
zpty -w z $'\C-X'"print -r -- '<''end>'"
zpty -r z out '*<end>*'
print -r -- "$out" | tr -d '\r' | grep -ao '<m>[^<[:cntrl:] ]*' | cut -c4- | sort -u
zpty -d z
