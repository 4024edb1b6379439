import AppShell
import AppShellDemo
import Glibc

// The demo is the default app: its configuration, its server, and the command that runs it.
exit(
    ShellCommand.run(DemoConfiguration.self) { try DemoApp(configuration: $0).server })
