import Synchronization

/// An object made at most once, when first asked for, by whichever thread asks first:
/// `Synchronization.AtomicLazyReference`'s job, with its two operations inlined where they are
/// used.
///
/// `AtomicLazyReference`'s are not: each call ran generic code in the standard library that
/// looked up its type's metadata at run time, 1 300 instructions per stored snapshot on the
/// store writer's thread (callgrind) for what is one atomic load and one compare-and-exchange.
package struct LazyObject<Object: AnyObject & Sendable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the object is published by one compare-and-exchange (releasing) and read by
    // acquiring loads; once stored it never changes until `deinit`.

    /// The stored object's address (retained once), or 0.
    @usableFromInline let address: Atomic<UInt>

    /// Empty.
    @inlinable
    package init() { address = Atomic(0) }

    /// The object, if one was stored.
    @inlinable
    package func load() -> Object? {
        LazyObject.object(at: address.load(ordering: .acquiring))
    }

    /// Stores `object` unless one was stored before, and returns the one stored (the earlier
    /// one, if any: two threads that made one at once both get the same).
    @inlinable
    package func storeIfNil(_ object: Object) -> Object {
        let retained = Unmanaged.passRetained(object)
        let (stored, earlier) = address.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring)
        if stored { return object }
        retained.release()
        // Not 0: the exchange failed because an object was there.
        return LazyObject.object(at: earlier)!
    }

    @inlinable
    static func object(at address: UInt) -> Object? {
        UnsafeRawPointer(bitPattern: address).map { Unmanaged<Object>.fromOpaque($0).takeUnretainedValue() }
    }

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) {
            Unmanaged<Object>.fromOpaque(pointer).release()
        }
    }
}
