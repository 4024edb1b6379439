import AppShellConcurrency
import Glibc

/// Refuses logins for a key (a session id, a client IP) after too many recent failures.
///
/// The default policy is "more than 5 failures a minute per session or client IP → refused":
/// after `maxFailures` failures within `window` seconds, the next attempt is refused until the
/// oldest of them leaves the window. Keying on the IP stops an attacker who simply drops the
/// session cookie; keying on the session stops one who rotates IPs but keeps the cookie.
///
/// Memory is bounded whatever the traffic: each key keeps at most `maxFailures` timestamps, keys
/// whose failures have all left the window are dropped, and past `maxTrackedKeys` keys the one
/// that failed least recently is dropped, so rotating through many IPs costs the attacker the
/// blocks on the oldest ones rather than costing the server memory.
package final class LoginRateLimiter: Sendable {
    private struct Entry {
        /// The most recent failures, oldest first, at most `maxFailures` of them: older ones
        /// cannot change whether the key is blocked.
        var failures: [Int64]
        /// Matches the newest record of this key in `State.order`; older records are stale.
        var generation: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Keys in the order of their last failure, oldest first from `head`, with stale records
        /// skipped lazily: pruning and eviction both take from the front in amortised O(1).
        var order: [(key: String, generation: UInt64)] = []
        var head = 0
        var nextGeneration: UInt64 = 0
    }

    private let maxFailures: Int
    private let window: Int64
    private let maxTrackedKeys: Int
    private let clock: @Sendable () -> Int64
    private let state = Locked(State())

    /// A limiter allowing `maxFailures` failures per key within `window` seconds, tracking at
    /// most `maxTrackedKeys` keys; `clock` returns seconds and is replaceable for tests.
    package init(
        maxFailures: Int = 5,
        window: Int64 = 60,
        maxTrackedKeys: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) {
        precondition(maxFailures >= 1, "maxFailures must be at least 1")
        precondition(window >= 1, "window must be at least 1 second")
        precondition(maxTrackedKeys >= 1, "maxTrackedKeys must be at least 1")
        self.maxFailures = maxFailures
        self.window = window
        self.maxTrackedKeys = maxTrackedKeys
        self.clock = clock
    }

    /// Tells whether an attempt must be refused: any of `keys` already has `maxFailures`
    /// failures within the window.
    ///
    /// Check this before verifying the password, so a blocked attacker does not even get to
    /// spend the server's hashing time.
    package func isBlocked(keys: [String]) -> Bool {
        let now = clock()
        return state.withLock { state in
            prune(&state, now: now)
            return keys.contains { key in
                guard let entry = state.entries[key] else { return false }
                return recentCount(entry.failures, now: now) >= maxFailures
            }
        }
    }

    /// Seconds until none of `keys` is blocked any more; 0 when none is blocked now.
    package func secondsUntilUnblocked(keys: [String]) -> Int64 {
        let now = clock()
        return state.withLock { state in
            prune(&state, now: now)
            var longest: Int64 = 0
            for key in keys {
                guard let entry = state.entries[key] else { continue }
                let recent = entry.failures.filter { isRecent($0, now: now) }
                guard recent.count >= maxFailures else { continue }
                // Unblocked once the oldest failure that still counts leaves the window.
                longest = max(longest, recent[recent.count - maxFailures] + window - now)
            }
            return longest
        }
    }

    /// Counts one failed attempt against each of `keys` (a key given twice counts once).
    package func recordFailure(keys: [String]) {
        let now = clock()
        state.withLock { state in
            prune(&state, now: now)
            var seen = Set<String>()
            for key in keys where seen.insert(key).inserted {
                var entry = state.entries[key] ?? Entry(failures: [], generation: 0)
                entry.failures.removeAll { !isRecent($0, now: now) }
                entry.failures.append(now)
                if entry.failures.count > maxFailures {
                    entry.failures.removeFirst(entry.failures.count - maxFailures)
                }
                entry.generation = state.nextGeneration
                state.nextGeneration += 1
                state.order.append((key, entry.generation))
                state.entries[key] = entry
            }
            while state.entries.count > maxTrackedKeys, let oldest = popLiveFront(&state) {
                state.entries[oldest] = nil
            }
            compact(&state)
        }
    }

    /// Takes back the newest failure counted against each of `keys`: for a failure counted ahead
    /// of its outcome (an attempt being checked) that turned out not to be one.
    package func withdrawFailure(keys: [String]) {
        state.withLock { state in
            for key in Set(keys) {
                guard var entry = state.entries[key], !entry.failures.isEmpty else { continue }
                entry.failures.removeLast()
                state.entries[key] = entry.failures.isEmpty ? nil : entry
            }
        }
    }

    /// Forgets the failures of `keys`, for a successful login.
    ///
    /// Pass the session key only: clearing the IP key would let an attacker who also owns one
    /// valid account reset the count for the whole IP by logging into it between guesses.
    package func reset(keys: [String]) {
        let now = clock()
        state.withLock { state in
            for key in keys {
                state.entries[key] = nil
            }
            prune(&state, now: now)
            compact(&state)
        }
    }

    /// The number of keys currently holding failures; a gauge for monitoring and the memory bound.
    package var trackedKeyCount: Int {
        let now = clock()
        return state.withLock { state in
            prune(&state, now: now)
            return state.entries.count
        }
    }

    private func isRecent(_ failure: Int64, now: Int64) -> Bool {
        now - failure < window
    }

    private func recentCount(_ failures: [Int64], now: Int64) -> Int {
        failures.count(where: { isRecent($0, now: now) })
    }

    /// Drops keys from the front of the order while their newest failure has left the window.
    ///
    /// A key behind one still in the window waits for a later call, which only happens when the
    /// clock steps back; `isBlocked` counts recent failures itself, so such a key never blocks.
    private func prune(_ state: inout State, now: Int64) {
        while state.head < state.order.count {
            let (key, generation) = state.order[state.head]
            if let entry = state.entries[key], entry.generation == generation {
                guard let newest = entry.failures.last, !isRecent(newest, now: now) else { break }
                state.entries[key] = nil
            }
            state.head += 1
        }
    }

    /// Removes and returns the key that failed least recently, skipping stale records.
    private func popLiveFront(_ state: inout State) -> String? {
        while state.head < state.order.count {
            let (key, generation) = state.order[state.head]
            state.head += 1
            if state.entries[key]?.generation == generation {
                return key
            }
        }
        return nil
    }

    /// Keeps the order array within a constant factor of the live keys, so repeated failures on
    /// one key cannot grow it without bound.
    private func compact(_ state: inout State) {
        if state.head > 0, state.head * 2 >= state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
        if state.order.count > 2 * state.entries.count + 64 {
            let entries = state.entries
            state.order = state.order[state.head...].filter { entries[$0.key]?.generation == $0.generation }
            state.head = 0
        }
    }
}
