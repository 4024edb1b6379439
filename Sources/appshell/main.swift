import AppShell
import AppShellDemo
import Glibc

// The demo is the default app: its configuration, its server, and the command that runs it.
exit(
    ShellCommand.run(DemoConfiguration.self) { try DemoServer(configuration: $0).server })
