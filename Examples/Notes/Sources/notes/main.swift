import AppShell
import Glibc
import NotesApp

// Before anything else: the program may start again here, with the allocator set up for a server.
AllocatorTuning.restartIfUntuned()

// The whole command: parse `--config`, load the configuration (file, then APPSHELL_*), serve.
exit(
    ShellCommand.run(NotesConfiguration.self, executable: "notes") {
        try NotesServer(configuration: $0).server
    })
