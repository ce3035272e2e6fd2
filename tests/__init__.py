"""The project's tests (``pytest``; see the README).

The terminal client's tests (tests/clients/test_human.py) start it in a pseudo-terminal with pexpect,
which forks this process; by then other tests have left gRPC's threads running here. gRPC's fork support
would restart them in the child, where pexpect closes every descriptor before it runs the program, and a
restarted poller then fails on its closed epoll descriptor and can end the child before it starts
("epoll_wait error: Bad file descriptor"). The child runs nothing of gRPC's before its exec, so the tests
turn fork support off before gRPC is first imported (this package is imported before any test module).
"""

import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
