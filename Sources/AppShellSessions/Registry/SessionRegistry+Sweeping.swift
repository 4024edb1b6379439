import AppShellConcurrency

extension SessionRegistry {
    /// Whether `id` names a session that has not expired, in memory or in the backend. Unlike a
    /// request it changes nothing: it neither loads the session into memory nor counts as a use
    /// (for the server's own checks, such as whether an open event stream's session still exists).
    package func names(_ id: SessionID) throws -> Bool {
        let now = clock()
        if let inMemory = shard(for: id).names(id, now: now, configuration) { return inMemory }
        guard let record = try backend.load(id) else { return false }
        return now - record.accessed <= configuration.idleTimeoutSeconds
            && now - record.created <= configuration.absoluteTimeoutSeconds
    }

    /// Removes expired sessions from memory and from the backend; returns how many left memory.
    /// With a store writer the backend's part is queued for it, not waited for: the sweep runs on
    /// the server's timer thread, which serves the splash timers and the streams' heartbeats and
    /// must not wait out a batch being committed.
    @discardableResult
    package func sweep() throws -> Int {
        let now = clock()
        let removed = shards.reduce(0) { $0 + $1.removeExpired(now: now, configuration) }
        // The backend's `accessed` of a session live in memory lags its last use by less than the
        // touch interval: a row is idle only when it is older than both together (a load still
        // checks the exact idle timeout).
        let expired = StoreWrite.removeExpired(
            accessedBefore: now - configuration.idleTimeoutSeconds - configuration.touchIntervalSeconds,
            createdBefore: now - configuration.absoluteTimeoutSeconds)
        if let writer {
            _ = writer.submit(expired) { error in
                guard let error else { return }
                Logger.appshell.error("session store: expired sessions were not deleted: \(error)")
            }
        } else {
            try backend.apply(expired)
        }
        return removed
    }

    /// Sweeps every `sweepIntervalSeconds` on `timers` (the server's shared queue), or on a
    /// thread of its own when it is `nil`.
    package func startSweeper(timers: TimerQueue? = nil) {
        sweeper.withLock { current in
            guard current == nil else { return }
            current = SessionSweeper(registry: self, interval: configuration.sweepIntervalSeconds, timers: timers)
        }
    }

    /// Stops sweeping, if it runs, once a sweep that is running has finished.
    package func stopSweeper() {
        let running = sweeper.withLock { current -> SessionSweeper? in
            defer { current = nil }
            return current
        }
        running?.stop()
    }

    /// Deletes the stored record of an expired session: queued for the store writer without
    /// waiting for it when there is one (this runs on a server thread, which must not wait for a
    /// commit, nor take the writer's connection while a batch holds it). A failed or refused
    /// delete only leaves an expired record, which loads as nothing and the sweeper removes.
    func forget(_ id: SessionID) throws {
        guard let writer else { return try backend.remove(id) }
        _ = writer.submit(.remove(id)) { error in
            guard let error else { return }
            Logger.appshell.error("session store: an expired session was not deleted: \(error)")
        }
    }
}
