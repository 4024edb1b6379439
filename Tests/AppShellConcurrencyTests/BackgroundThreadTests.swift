import AppShellConcurrency
import Dispatch
import Glibc
import Testing

/// Background threads run their closure on a thread of their own, named as asked.
@Suite struct BackgroundThreadTests {
    /// What a started thread saw: its name (`comm`) and whether it was the test's thread.
    struct Observed: Sendable {
        let name: String
        let thread: pthread_t
    }

    /// Starts a thread named `name` and returns what it observed, waiting up to a minute.
    static func observe(named name: String?) throws -> Observed {
        let seen = Locked<Observed?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = BackgroundThread {
            seen.withLock { $0 = Observed(name: currentThreadName(), thread: pthread_self()) }
            done.signal()
        }
        thread.name = name
        thread.start()
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        return try #require(seen.withLock { $0 })
    }

    /// The calling thread's name as the kernel reports it (`ps -T`, `top -H`).
    static func currentThreadName() -> String {
        let file = open("/proc/thread-self/comm", O_RDONLY)
        guard file >= 0 else { return "" }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(file, &bytes, bytes.count)
        return String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
            .trimmingSuffix(while: { $0 == "\n" })
    }

    @Test func runsTheClosureOnAnotherThreadWithItsName() throws {
        let observed = try Self.observe(named: "appshell-test")
        #expect(pthread_equal(observed.thread, pthread_self()) == 0)
        #expect(observed.name == "appshell-test")
    }

    @Test func aLongNameKeepsTheFifteenBytesLinuxAllows() throws {
        let observed = try Self.observe(named: "appshell-session-sweeper")
        #expect(observed.name == "appshell-sessio")
    }

    @Test func manyThreadsEachRunOnce() {
        let runs = Locked(0)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<32 {
            let thread = BackgroundThread {
                runs.withLock { $0 += 1 }
                finished.signal()
            }
            thread.start()
        }
        for _ in 0..<32 { #expect(finished.wait(timeout: .now() + .seconds(60)) == .success) }
        #expect(runs.withLock { $0 } == 32)
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = self
        while let last = text.last, predicate(last) { text.removeLast() }
        return text
    }
}
