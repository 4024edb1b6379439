import AppShellConcurrency

// The secrets every instance sharing the store uses (the form-token key), and keeping them there
// when Redis evicts keys.

extension RedisDefaultsBackend {
    /// The secret `name` that every instance sharing this store uses (the form-token key): the
    /// one stored under `<prefix>secret:<name>`, or `make()`'s, stored now, when there is none. Of
    /// two instances starting at once, both get the first one stored (`SET … NX`, then `GET`).
    ///
    /// It is stored without expiry, so a `maxmemory-policy` of `noeviction` (Redis's default) or
    /// `volatile-*` never evicts it (every session's key has an expiry); `allkeys-*` may
    /// (`evictionWarning`). Every sweep puts it back if it is gone (`keepSharedSecrets`), so an
    /// eviction is repaired with the key the instances use rather than replaced by a new one that
    /// would refuse every form already served — unless an instance starts in between.
    package func sharedSecret(named name: String, making make: () -> [UInt8]) throws(StoreError) -> [UInt8] {
        let key = bytes(keyPrefix + "secret:" + name)
        let replies = try writer.pipeline([[bytes("SET"), key, make(), bytes("NX")], [bytes("GET"), key]])
        for reply in replies {
            if case .error = reply { throw unexpected(reply, "the shared secret \(name)") }
        }
        guard let secret = replies[1].bytes, !secret.isEmpty else {
            throw unexpected(replies[1], "the shared secret \(name)")
        }
        secrets.withLock { $0[name] = secret }
        return secret
    }

    /// Puts back the shared secrets this instance uses that are gone from Redis (evicted), and
    /// says so; says so too when one is stored that is not this instance's (it was gone while an
    /// instance started, which made a new one: forms one served are refused by the other until
    /// they are restarted). Failures are left to the next sweep.
    func keepSharedSecrets() {
        for (name, secret) in secrets.withLock({ $0 }) {
            let key = bytes(keyPrefix + "secret:" + name)
            let replies = try? writer.pipeline([[bytes("SET"), key, secret, bytes("NX")], [bytes("GET"), key]])
            guard let replies, replies.count == 2 else { continue }
            if replies[0] == .status("OK") {
                Logger.appshell.error(
                    "session store: the shared secret \(name) was gone from Redis (evicted? see "
                        + "the Deploying article, Scale out on Redis); it was put back")
            } else if let stored = replies[1].bytes, stored != secret {
                Logger.appshell.error(
                    "session store: the shared secret \(name) in Redis is not this instance's (it was "
                        + "gone while another instance started); forms are refused across them until they restart")
            }
        }
    }

    /// A warning when the server's `maxmemory-policy` may evict a key without expiry (`allkeys-*`:
    /// the shared secrets); `nil` when it cannot, or the server does not say (`CONFIG` refused).
    package func evictionWarning() -> String? {
        // On a cluster, the first primary's: the nodes of a deployment are configured alike.
        let reply = try? reader.command(
            [bytes("CONFIG"), bytes("GET"), bytes("maxmemory-policy")], node: reader.nodeNames.first ?? "")
        guard case .array(let parts) = reply, parts.count == 2, let policy = parts[1].text,
            policy.hasPrefix("allkeys-")
        else { return nil }
        return "Redis's maxmemory-policy is \(policy), which may evict the form-token key; "
            + "use noeviction or volatile-lru (the Deploying article, Scale out on Redis)"
    }
}
