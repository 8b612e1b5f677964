from control_center.cli import main

raise SystemExit(main())
