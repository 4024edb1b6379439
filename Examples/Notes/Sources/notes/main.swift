import AppShell
import Glibc
import NotesApp

// The whole command: parse `--config`, load the configuration (file, then APPSHELL_*), serve.
exit(
    ShellCommand.run(NotesConfiguration.self, executable: "notes") {
        try NotesServer(configuration: $0).server
    })
