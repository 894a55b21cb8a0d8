from runeconsole.cli import main

raise SystemExit(main())
