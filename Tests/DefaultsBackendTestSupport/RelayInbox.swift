import AppShellConcurrency
import AppShellSessions
import Foundation

/// What a started relay receives, in order, for a relay test to wait for: `started(_:listening:)`
/// starts a relay with one.
package final class RelayInbox: Sendable {
    /// The messages received so far: each its channel and its text.
    package let messages = Locked<[(String, String)]>([])

    /// Starts `relay`, its messages going to a new inbox, and each channel it says it hears
    /// (`start`'s `listening`) to `listening`.
    package static func started(_ relay: some StoreMessageRelay, listening: Locked<[String]>? = nil) -> RelayInbox {
        let inbox = RelayInbox()
        relay.start { channel, message in
            inbox.messages.withLock { $0.append((channel, String(decoding: message, as: UTF8.self))) }
        } listening: { channel in
            listening?.withLock { $0.append(channel) }
        }
        return inbox
    }

    /// The messages once `count` have come, or those that came within `seconds`.
    package func wait(for count: Int, seconds: Double = 10) -> [(String, String)] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let received = messages.withLock { $0 }
            if received.count >= count { return received }
            usleep(5_000)
        }
        return messages.withLock { $0 }
    }
}
