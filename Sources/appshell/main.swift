import AppShellDemo
import AppShellHTTP
import FoundationEssentials
import Glibc

// Before any thread starts, so that only the main thread's sigwait sees SIGINT and SIGTERM.
TerminationSignal.block()
exit(AppShellCommand.run(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment))
