import AppShellConcurrency
import Dispatch
import Glibc
import Testing

/// A `share` pool's threads run at the nice value of their share, read back from the kernel; its
/// rescheduler runs with the shortest slice and wakes only while a job runs; what the log line
/// says when the kernel refuses.
@Suite struct CoreShareTests {
    @Test(arguments: [(50, 0), (25, 5), (20, 6), (10, 10), (5, 13), (1, 19)] as [(Int, Int32)])
    func aShareBecomesTheNiceValueWhoseWeightComesNearest(percent: Int, nice: Int32) {
        #expect(CoreShare(percent: percent).nice == nice)
    }

    @Test func sharesAndSlicesAreClampedToWhatTheKernelTakes() {
        #expect(CoreShare(percent: 0).percent == 1)
        #expect(CoreShare(percent: 90).percent == 50)
        #expect(CoreShare(sliceMicroseconds: -5).sliceMicroseconds == 0)
        #expect(CoreShare(sliceMicroseconds: 10).sliceMicroseconds == 100)
        #expect(CoreShare(sliceMicroseconds: 1_000_000).sliceMicroseconds == 100_000)
        #expect(CoreShare(percent: 20).effectivePercent == 21.0)
    }

    /// What a job of a `share` pool runs with, read back with `sched_getattr`.
    static func observed(share: CoreShare) throws -> ThreadScheduling {
        let pool = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-share", priority: .share, share: share)
        defer { pool.stop() }
        let seen = Locked<ThreadScheduling?>(nil)
        let done = DispatchSemaphore(value: 0)
        #expect(
            pool.submit {
                seen.withLock { $0 = ThreadScheduling.current }
                done.signal()
            })
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        return try #require(seen.withLock { $0 })
    }

    @Test(arguments: [20, 10, 3])
    func aSharePoolsJobRunsAtItsNiceValueUnderTheFairPolicy(percent: Int) throws {
        let share = CoreShare(percent: percent, sliceMicroseconds: 1000)
        let scheduling = try Self.observed(share: share)
        #expect(scheduling.policy == 0)  // SCHED_OTHER
        #expect(scheduling.nice == share.nice)
        #expect(ThreadScheduling.current?.nice == 0)  // the test's thread is untouched
    }

    /// The threads of this process named `name`, by id.
    static func threads(named name: String) -> [Int32] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var found: [Int32] = []
        while let entry = readdir(directory) {
            let id = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let tid = Int32(id), read("/proc/self/task/\(tid)/comm")?.hasPrefix(name) == true else { continue }
            found.append(tid)
        }
        return found
    }

    /// A small /proc file's text.
    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var text = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            text += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return text
    }

    /// A field of /proc/self/task/<tid>/sched or status (`se.slice`, `voluntary_ctxt_switches`).
    static func field(_ name: String, of tid: Int32, in file: String) -> Int? {
        guard let text = read("/proc/self/task/\(tid)/\(file)") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return line.split(separator: ":").last.flatMap { Int($0.filter { $0 != " " && $0 != "\t" }) }
        }
        return nil
    }

    @Test func theReschedulerHasTheShortestSliceAndWakesOnlyWhileAJobRuns() throws {
        let name = "rt"
        let pool = WorkerPool(
            threads: 1, queueLimit: 1, name: name, priority: .share,
            share: CoreShare(percent: 20, sliceMicroseconds: 200))
        defer { pool.stop() }
        // The thread names itself once it runs.
        var found = Self.threads(named: "\(name)-tick").first
        for _ in 0..<6000 where found == nil {
            usleep(10_000)
            found = Self.threads(named: "\(name)-tick").first
        }
        let tid = try #require(found)
        // The kernel keeps the slice since Linux 6.12 (these machines run 6.18).
        #expect(Self.field("se.slice", of: tid, in: "sched") == 100_000)
        let idleBefore = try #require(Self.field("voluntary_ctxt_switches", of: tid, in: "status"))
        usleep(20_000)
        #expect(Self.field("voluntary_ctxt_switches", of: tid, in: "status") == idleBefore)
        let done = DispatchSemaphore(value: 0)
        pool.submit {
            usleep(100_000)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + .seconds(60)) == .success)
        let afterJob = try #require(Self.field("voluntary_ctxt_switches", of: tid, in: "status"))
        #expect(afterJob > idleBefore + 2)
    }

    @Test func poolsAtOtherPrioritiesOrWithoutASliceHaveNoRescheduler() {
        for (priority, slice, expected) in [
            (ThreadPriority.share, 1000, 1000), (.share, 0, nil), (.idle, 1000, nil), (.low, 1000, nil),
            (.normal, 1000, nil),
        ] as [(ThreadPriority, Int, Int?)] {
            let pool = WorkerPool(
                threads: 1, queueLimit: 1, name: "rtnone", priority: priority,
                share: CoreShare(sliceMicroseconds: slice))
            #expect(pool.reschedulingMicroseconds == expected)
            pool.stop()
        }
    }

    @Test func theLogLineSaysWhatTheThreadsRunWith() {
        let share = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-log", priority: .share)
        defer { share.stop() }
        #expect(
            share.schedulingDescription()
                == "nice 6 (about 21.0 % of a core a server thread keeps busy) in slices of about 1000 µs")
        let idle = WorkerPool(threads: 1, queueLimit: 1, name: "appshell-test-log", priority: .idle)
        defer { idle.stop() }
        #expect(idle.schedulingDescription().hasPrefix("SCHED_IDLE"))
    }

    /// Where the kernel refuses (no privilege to raise a nice value back, a seccomp profile, a
    /// kernel before 6.12), the line says so and what the threads run with instead.
    @Test func theLogLineSaysWhatTheKernelRefused() {
        let refused = WorkerPool.describe(.share, share: CoreShare(), error: EPERM, shortSlice: false)
        #expect(
            refused == "keep the priority of the thread that made the pool (share refused: Operation not permitted)")
        let oldKernel = WorkerPool.describe(.share, share: CoreShare(), error: 0, shortSlice: false)
        #expect(oldKernel.contains("in slices of about 1000 µs, less promptly"))
        #expect(oldKernel.contains("Linux 6.12"))
        let tick = WorkerPool.describe(.share, share: CoreShare(sliceMicroseconds: 0), error: 0, shortSlice: true)
        #expect(tick.hasSuffix("in the kernel's slices (up to a 4 ms tick)"))
    }
}
