extension RedisDefaultsBackend {
    /// When a session expires: its idle and absolute timeouts.
    package struct Expiry: Sendable, Equatable {
        /// Seconds after the last access.
        package var idleSeconds: Int64
        /// Seconds after creation.
        package var absoluteSeconds: Int64

        /// Timeouts of `idleSeconds` after the last access and `absoluteSeconds` after creation.
        package init(idleSeconds: Int64, absoluteSeconds: Int64) {
            self.idleSeconds = idleSeconds
            self.absoluteSeconds = absoluteSeconds
        }

        /// The Unix second at which a record with these times expires.
        func deadline(created: Int64, accessed: Int64) -> Int64 {
            let (idle, idleOverflow) = accessed.addingReportingOverflow(idleSeconds)
            let (age, ageOverflow) = created.addingReportingOverflow(absoluteSeconds)
            return min(idleOverflow ? Int64.max : idle, ageOverflow ? Int64.max : age)
        }
    }
}
