import AppShellAuth
import AppShellConcurrency

/// How fast one client may start sessions that the server holds in memory: a visitor's session
/// becomes an app held in memory when its cookie first comes back, and nothing else bounds how
/// many of those one client makes but the cap on sessions in memory (3 000 visitors from one
/// client took the RSS from 36 to 188 MiB in 9 s, issue 31, finding 2).
///
/// A token bucket per client (an IPv4 address, an IPv6 /64, the forwarded address behind a trusted
/// proxy): `perMinute` starts at once, then `perMinute` a minute. It tracks at most `maxClients`
/// clients; when that many are tracked, the full buckets (clients idle for a minute) are dropped,
/// and if none is full the newcomer is not tracked (let in): the limit is a brake on one client,
/// never a reason to refuse everyone.
final class SessionStartLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: Int64
    }

    /// Starts a client may make in a minute (0: no limit).
    let perMinute: Int
    private let maxClients: Int
    private let buckets = Locked<[String: Bucket]>([:])

    /// A limiter of `perMinute` starts a minute per client, tracking at most `maxClients`.
    init(perMinute: Int, maxClients: Int = 100_000) {
        self.perMinute = max(0, perMinute)
        self.maxClients = max(1, maxClients)
    }

    /// Counts a start by `clientAddress` at `now` (Unix seconds); returns 0 when it may start now,
    /// else the seconds until it may (nothing counted).
    func admit(_ clientAddress: String, now: Int64) -> Int64 {
        guard perMinute > 0 else { return 0 }
        let client = LoginThrottle.clientKey(for: clientAddress)
        let capacity = Double(perMinute)
        let perSecond = capacity / 60
        return buckets.withLock { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: capacity, at: now)
            bucket.tokens = min(capacity, bucket.tokens + Double(max(0, now - bucket.at)) * perSecond)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[client] = bucket
                return max(1, Int64(((1 - bucket.tokens) / perSecond).rounded(.up)))
            }
            bucket.tokens -= 1
            if buckets[client] == nil && buckets.count >= maxClients {
                buckets = buckets.filter { now - $0.value.at < 60 }
                guard buckets.count < maxClients else { return 0 }
            }
            buckets[client] = bucket
            return 0
        }
    }
}
