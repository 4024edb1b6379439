/// DESIGN: a session's lease, in a store several instances share (Redis).
///
/// Without one, every request of a stored session is checked against the store before it runs
/// (`SessionRegistry.refreshed`): another instance may have changed the session. That is a round
/// trip to the store per request, and a hop to the loader's thread and back. With a lease, the
/// instance that served the session's last requests answers from memory: while it holds the
/// lease no other instance writes the record or the user's store it covers (their writes are
/// refused as conflicts, and run again once it ended), so what this instance holds is what is
/// stored.
///
/// The store grants it for `length` milliseconds of its own clock, from when it ran the check;
/// the instance trusts it until `length − margin` after it *sent* the check, on its own
/// monotonic clock — so it never trusts a lease the store thinks expired, however long the round
/// trip took. An instance that is refused because of another's lease waits out what is left of it
/// (the check tells it how long), and the record and store become contested: no lease for either
/// for a while (`quietMilliseconds`), so traffic that moves between instances pays the wait at
/// most once in that time. The store grants a lease only to the instance that asked for it twice
/// in a row, so requests spread over instances in turn never get one and never wait.
package struct LeaseTerms: Sendable, Equatable {
    /// How long the store grants a lease, in milliseconds of its clock.
    package var length: Int
    /// How much sooner the holder stops trusting it (for clocks that run at different rates).
    package var margin: Int
    /// How long a record or user's store another instance waited for gets no lease.
    package var quietMilliseconds: Int

    /// The terms Redis leases are granted on: one second, trusted for 750 ms; 30 s without a
    /// lease once contested.
    package static let standard = LeaseTerms(length: 1_000, margin: 250, quietMilliseconds: 30_000)
}

/// What a lease covers: a session's record, or a user's store (for the sessions logged in as the
/// user whose leases cover it).
package enum LeaseTarget: Sendable, Equatable {
    /// The record of the session with this store key.
    case session(SessionStoreKey)
    /// The store of this user.
    case userStore(String)
}

/// What the loader asks the store of a session in memory (`DefaultsBackend.checkLeases`).
package struct LeaseRequest: Sendable {
    /// The session.
    package var id: SessionID
    /// The user it is logged in as, whose store the lease covers too.
    package var user: String?
    /// Whether it asks for the lease (else it only checks, as one refused by another's lease).
    package var asks: Bool

    /// A request for `id`'s lease, or (`asks` false) for what is left of another's.
    package init(id: SessionID, user: String?, asks: Bool) {
        self.id = id
        self.user = user
        self.asks = asks
    }
}

/// What the store answered a `LeaseRequest`.
package struct LeaseAnswer: Sendable, Equatable {
    /// The record's version (`nil`: there is none).
    package var version: Int64?
    /// The version of the user's store (0: none, or no user).
    package var userStoreVersion: Int64
    /// Whether this instance holds the lease now.
    package var granted: Bool
    /// What is left of another instance's lease on the record or the store, in milliseconds.
    package var othersMilliseconds: Int

    /// An answer.
    package init(version: Int64?, userStoreVersion: Int64, granted: Bool, othersMilliseconds: Int) {
        self.version = version
        self.userStoreVersion = userStoreVersion
        self.granted = granted
        self.othersMilliseconds = othersMilliseconds
    }
}
