import AppShellDemo
import AppShellHTTP
import Foundation

// Before any thread starts, so that only the main thread's sigwait sees SIGINT and SIGTERM.
TerminationSignal.block()
exit(AppShellCommand.run(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment))
