import AppShell
import AppShellDemo
import Glibc

// The demo is the default app: its configuration, its server, and the command that runs it.
exit(
    ShellCommand.run(DemoConfiguration.self, subcommands: [DemoApp.hashPassword]) {
        let app = try DemoApp(configuration: $0)
        app.logPasswordCheckScheduling()
        return app.server
    })
