from control_center.entry import main

raise SystemExit(main())
