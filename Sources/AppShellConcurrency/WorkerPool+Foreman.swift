import Synchronization

extension WorkerPool {
    /// One thread of a pool below the normal priority, as the foreman sees it.
    final class Worker: @unchecked Sendable {
        // @unchecked: `job` and `then` are handed over, never shared: `job` is written by the
        // foreman before it signals `go` and read by the thread after its wait; `then` is written
        // by the thread before it raises `ended` (releasing) and read by the foreman after it saw
        // it raised (acquiring).
        /// Signalled when `job` holds the thread's next job, or `nil` for the thread to end.
        let go = Semaphore()
        var job: Job?
        /// What follows the job that ended.
        var then: (@Sendable () -> Void)?
        /// Whether the job ended (and `then` holds what follows it).
        let ended = Atomic<Bool>(false)
    }

    /// The one thread at the priority of the thread that made a low-priority pool that hands its
    /// jobs to its threads and runs what follows them, in the order it finds them ended (with one
    /// thread, the order of the jobs). Nothing it waits for can be held up by a pool thread: a
    /// thread preempted before it raised `ended` delays only what follows its own job.
    final class Foreman: Sendable {
        /// Signalled by whoever has news for the foreman: a job queued, a job ended, the pool
        /// stopping.
        let wake = Semaphore()
        let workers: [Worker]

        init(threads: Int) { workers = (0..<threads).map { _ in Worker() } }
    }

    /// A thread of a low-priority pool: runs the jobs the foreman hands it, and tells it when each
    /// ended, without a lock (see `Semaphore`).
    func work(_ worker: Worker) {
        guard let foreman else { return }
        while true {
            worker.go.wait()
            guard let job = worker.job else { return }
            worker.job = nil
            worker.then = job()
            afterJob?()
            worker.ended.store(true, ordering: .releasing)
            foreman.wake.signal()
        }
    }

    /// The foreman's thread: at each piece of news, takes what follows the jobs that ended, hands
    /// queued jobs to the threads that are free, then runs what followed; once the pool stopped
    /// with nothing queued or running, ends the threads and itself.
    func supervise(_ foreman: Foreman) {
        var free = foreman.workers
        var busy: [Worker] = []
        while true {
            foreman.wake.wait()
            var thens: [(@Sendable () -> Void)?] = []
            busy.removeAll { worker in
                guard worker.ended.load(ordering: .acquiring) else { return false }
                thens.append(worker.then)
                worker.then = nil
                worker.ended.store(false, ordering: .relaxed)
                free.append(worker)
                return true
            }
            let (jobs, finished) = locked { state -> ([Job], Bool) in
                state.running -= thens.count
                var jobs: [Job] = []
                while jobs.count < free.count, let job = state.jobs.popFirst() { jobs.append(job) }
                state.running += jobs.count
                return (jobs, state.stopping && state.waiting == 0 && state.running == 0)
            }
            for job in jobs {
                let worker = free.removeLast()
                busy.append(worker)
                worker.job = job
                worker.go.signal()
            }
            for then in thens { then?() }
            if finished {
                for worker in foreman.workers {
                    worker.job = nil
                    worker.go.signal()
                }
                return
            }
        }
    }
}
