import AppShell
import AppShellConcurrency
import AppShellDemo
import Glibc

// Before anything else: the program may start again here, with the allocator set up for a server.
AllocatorTuning.restartIfUntuned()

// The demo is the default app: its configuration, its server, and the command that runs it.
exit(
    ShellCommand.run(DemoConfiguration.self) {
        let app = try DemoServer(configuration: $0)
        app.logPasswordCheckScheduling()
        return app.server
    })
