/// Messages between the instances that share a store: what one sends on a channel, every other
/// one receives (a session's events for the pages another instance holds open). Best effort: a
/// message sent while the relay cannot reach its server is lost, and the receivers catch up on
/// their next request (a page's state always comes with its next answer).
package protocol StoreMessageRelay: Sendable {
    /// Sends `message` on `channel` to the other instances, without waiting; this instance does
    /// not receive it.
    func send(_ message: [UInt8], on channel: String)
    /// Delivers the other instances' messages to `receive`, in the order each sent them, on the
    /// relay's thread, from now until `stop`.
    func start(_ receive: @escaping @Sendable (_ channel: String, _ message: [UInt8]) -> Void)
    /// Stops receiving and sending; returns once the relay's threads no longer call anything.
    func stop()
}
