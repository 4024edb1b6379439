import Glibc

/// The state of a `TimerQueue` and its thread's loop, apart from the public type: the thread holds
/// only this, so a queue that nobody references any more can end its thread from its `deinit`.
final class TimerQueueCore: @unchecked Sendable {
    // @unchecked: `state` is read and written only with `condition`'s lock held.

    /// Whether the thread runs.
    enum Phase {
        case stopped, running, stopping
    }

    /// A timer not cancelled: its work, its interval (0: once) and the sequence number of its
    /// node in the heap (an older node of it is a stale one).
    struct Entry {
        let work: @Sendable () -> Void
        let interval: Int64
        var sequence: UInt64
    }

    struct State {
        var heap = TimerHeap()
        var entries: [UInt64: Entry] = [:]
        var nextNumber: UInt64 = 1
        var nextSequence: UInt64 = 0
        var phase = Phase.stopped
        /// Counts the threads started, so that `stop` waits for the thread it stopped only.
        var generation = 0
        var threadAlive = false
        /// The running thread, to know when a call comes from the queue's own work.
        var thread: pthread_t?
        /// The timer whose work runs now.
        var running: UInt64?

        /// Puts timer `number` in the heap at `deadline`; its earlier node, if any, becomes stale.
        mutating func push(_ number: UInt64, deadline: Int64) {
            nextSequence += 1
            entries[number]?.sequence = nextSequence
            heap.push(TimerHeap.Node(deadline: deadline, sequence: nextSequence, timer: number))
        }

        /// Whether the calling thread is the queue's.
        var onQueueThread: Bool { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Guards `state`; the thread sleeps on it until the next deadline, `cancel` until a running
    /// work returns, `stop` until the thread ended (so every change is broadcast).
    private let condition = Condition()
    private var state = State()
    private let name: String
    private let clock: @Sendable () -> Int64

    init(name: String, clock: @escaping @Sendable () -> Int64) {
        self.name = name
        self.clock = clock
    }

    var pendingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.entries.count
    }

    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.phase == .running
    }

    func add(deadline: Int64, interval: Int64, work: @escaping @Sendable () -> Void) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        let number = state.nextNumber
        state.nextNumber += 1
        state.entries[number] = Entry(work: work, interval: interval, sequence: 0)
        state.push(number, deadline: deadline)
        // Only an earlier deadline than the one the thread sleeps until changes its sleep.
        if state.heap.first?.timer == number { condition.broadcast() }
        return number
    }

    func cancel(_ number: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let waiting = state.entries.removeValue(forKey: number) != nil
        // Stale nodes are dropped as they reach the top; when they are most of the heap (many
        // timers cancelled long before their deadline) it is rebuilt without them.
        if state.heap.count > 64 && state.heap.count > 2 * state.entries.count {
            let entries = state.entries
            state.heap.removeAll { entries[$0.timer]?.sequence != $0.sequence }
        }
        while state.running == number && !state.onQueueThread { condition.wait() }
        return waiting
    }

    func start() {
        condition.lock()
        while state.phase == .stopping && !state.onQueueThread { condition.wait() }
        guard state.phase == .stopped else {
            condition.unlock()
            return
        }
        state.phase = .running
        state.generation += 1
        state.threadAlive = true
        condition.unlock()
        let thread = BackgroundThread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func stop() {
        condition.lock()
        defer { condition.unlock() }
        if state.phase == .running {
            state.phase = .stopping
            condition.broadcast()
        }
        guard state.phase == .stopping, !state.onQueueThread else { return }
        let generation = state.generation
        while state.threadAlive && state.generation == generation { condition.wait() }
    }

    /// Asks the thread to end once its current work returns, without waiting for it.
    func requestStop() {
        condition.lock()
        defer { condition.unlock() }
        guard state.phase == .running else { return }
        state.phase = .stopping
        condition.broadcast()
    }

    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// The thread: runs each due timer's work in deadline order, sleeping until the next deadline.
    private func run() {
        condition.lock()
        state.thread = pthread_self()
        while state.phase == .running {
            while let top = state.heap.first, state.entries[top.timer]?.sequence != top.sequence {
                state.heap.popFirst()
            }
            guard let top = state.heap.first, let entry = state.entries[top.timer] else {
                condition.wait()
                continue
            }
            let now = clock()
            if top.deadline > now {
                condition.wait(milliseconds: Int(min(top.deadline - now, Int64(TimerQueue.longestSleep))))
                continue
            }
            state.heap.popFirst()
            if entry.interval == 0 { state.entries[top.timer] = nil }
            state.running = top.timer
            condition.unlock()
            entry.work()
            condition.lock()
            state.running = nil
            if entry.interval > 0 && state.entries[top.timer] != nil {
                // A run that began a whole interval late: the missed runs are not made up.
                let next =
                    now - top.deadline >= entry.interval ? clock() + entry.interval : top.deadline + entry.interval
                state.push(top.timer, deadline: next)
            }
            condition.broadcast()
        }
        state.thread = nil
        state.threadAlive = false
        state.phase = .stopped
        condition.broadcast()
        condition.unlock()
    }
}
