"""The bundle's entry point: the same ``control-center`` command as the wheel's."""

from control_center.entry import main

raise SystemExit(main())
