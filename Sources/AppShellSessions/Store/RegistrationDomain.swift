import AppShellConcurrency

/// The registered fallback values shared by every session of a registry: volatile and never
/// stored, like `UserDefaults`' registration domain.
final class RegistrationDomain: Sendable {
    private let storage = Locked<[String: DefaultsValue]>([:])

    /// A snapshot of every registered value.
    var values: [String: DefaultsValue] { storage.withLock { $0 } }

    /// The registered value for `key`.
    func value(forKey key: String) -> DefaultsValue? { storage.withLock { $0[key] } }

    /// Adds or replaces fallbacks.
    func register(_ values: [String: DefaultsValue]) {
        storage.withLock { $0.merge(values) { _, new in new } }
    }
}
