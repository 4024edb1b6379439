import AppShellTesting
import Foundation
import Testing

/// The running server has one thread for its work at a time — the splash and reminders, the
/// event streams' heartbeats, the session sweeps — rather than one of its own for each.
@Suite struct TimerThreadTests {
    /// The names of the threads of process `pid`, as `ps -T` shows them.
    static func threadNames(_ pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    @Test func theServerRunsItsTimedWorkOnOneThread() throws {
        let running = try CommandTests.run(environment: [
            "APPSHELL_PORT": "0", "APPSHELL_ACCESS_LOG": "false", "APPSHELL_SPLASH_DELAY_MILLISECONDS": "0",
        ])
        _ = try running.port()
        let pid = running.process.processIdentifier
        var names = Self.threadNames(pid)
        // Both threads start with the server, not before its port is known: wait for them (60 s at most).
        for _ in 0..<6000 where !(names.contains("appshell-timers") && names.contains("appshell-hangup")) {
            usleep(10_000)
            names = Self.threadNames(pid)
        }
        #expect(names.filter { $0 == "appshell-timers" }.count == 1, "\(names)")
        // Not the three threads that each slept until their own deadline.
        for old in ["appshell-schedu", "appshell-sessio", "appshell-heartb"] {
            #expect(!names.contains(old), "\(names)")
        }
        // The watcher of suspended sockets waits on them, not on a deadline: it stays a thread,
        // one for the event streams and the deferred answers both.
        #expect(names.filter { $0 == "appshell-hangup" }.count == 1, "\(names)")
        #expect(!names.contains("appshell-event-"), "\(names)")
        running.terminate()
        #expect(running.waitForExit() == 0)
    }
}
