extension WorkerPool {
    /// The one thread that runs, in order, what follows a low-priority pool's jobs, at the
    /// priority of the thread that made the pool. Its queue has no limit: each entry follows a job
    /// that held a place in the pool's queue, and it runs faster than the jobs it follows.
    final class Finisher: Sendable {
        /// The queue and counts, guarded by `condition`.
        private final class State: @unchecked Sendable {
            var finishes = FIFOQueue<@Sendable () -> Void>()
            /// Pool threads started and not exited: they may still queue a finish.
            var workers = 0
            var stopping = false
        }

        private let state = State()
        private let condition = Condition()

        /// A finisher whose thread, named `name`, starts now (with the calling thread's priority).
        init(name: String) {
            let thread = BackgroundThread { [self] in work() }
            thread.name = name
            thread.start()
        }

        /// Queues `finish`; it runs after those queued before it.
        func run(_ finish: @escaping @Sendable () -> Void) {
            condition.lock()
            state.finishes.append(finish)
            condition.signal()
            condition.unlock()
        }

        /// The pool started `count` threads.
        func workersStarted(_ count: Int) {
            condition.lock()
            state.workers += count
            condition.unlock()
        }

        /// A pool thread exited: once all have, after `stop`, the finisher exits when its queue is
        /// empty.
        func workerExited() {
            condition.lock()
            state.workers -= 1
            condition.signal()
            condition.unlock()
        }

        /// The pool stopped: run what is queued, and what its threads still queue, then exit.
        func stop() {
            condition.lock()
            state.stopping = true
            condition.signal()
            condition.unlock()
        }

        private func work() {
            while true {
                condition.lock()
                while state.finishes.isEmpty && !(state.stopping && state.workers == 0) {
                    condition.wait()
                }
                guard let finish = state.finishes.popFirst() else {
                    condition.unlock()
                    return
                }
                condition.unlock()
                finish()
            }
        }
    }
}
