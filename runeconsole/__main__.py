import sys

if sys.argv[1:3] == ["claude", "hook"]:
    # Claude Code runs this for every event of every agent: straight to the hook, without
    # the CLI's parser and the modules every other command loads.
    from runeconsole.services.claude.hooks.hook import main
elif sys.argv[1:3] == ["claude", "statusline"]:
    # Claude Code runs this whenever its status bar changes: straight there, too.
    from runeconsole.services.claude.statusline.statusline import main
else:
    from runeconsole.cli import main

raise SystemExit(main())
