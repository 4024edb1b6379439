import AppShellAuth

/// What an account flow's parent does once the user logged out everywhere.
public protocol AccountCoordinatorDelegate: AnyObject {
    /// Every other session of the user has ended (in every browser, on every instance): log this
    /// one out as the app does (`root.logOut()`, then its login screen).
    func accountCoordinatorDidEndOtherSessions(_ account: AccountCoordinator)
}

/// The framework's account flow: presents the account screen (who is logged in, a password
/// change, log out everywhere) modally, and finishes (leaves its parent) once it is closed. An
/// app starts it from a logged-in screen, lists it in that coordinator's `shows`, and logs out when
/// it says every other session ended (`AccountCoordinatorDelegate`):
///
/// ```swift
/// case .account:
///     let account = AccountCoordinator(root: root)
///     addChild(account)
///     account.start()
/// ```
///
/// A password change asks for the current password, checked as a login is (the throttle, the
/// password-check threads); it gives the session a new id and ends every other session of the
/// user (OWASP: a changed password logs the other sessions out).
public final class AccountCoordinator: Coordinator, RestorableCoordinator {
    /// The flow's name in the coordinator tree and its snapshot.
    public static let restorationIdentifier = "account"
    /// The account screen.
    public override class var shows: [any Restorable.Type] { [AccountScreen.self] }

    private let root: RootController
    private let accounts: Accounts
    private let screen: AccountScreen
    /// The place of this flow's password check under way: given back once the check ran (or was
    /// dropped, its client gone), which frees the flow for the next attempt, whatever becomes of
    /// the answer.
    private weak var checkUnderWay: PasswordCheckQuota.Place?

    /// An account flow on `root`, with a new screen.
    public convenience init(root: RootController) {
        guard let accounts = root.environment.accounts else {
            preconditionFailure("AccountCoordinator needs the server's accounts (root.environment.accounts)")
        }
        self.init(root: root, accounts: accounts, screen: AccountScreen())
    }

    /// The flow of the account screen a snapshot restored.
    public convenience init?(restoringUnder parent: Coordinator, root: RootController) {
        guard let accounts = root.environment.accounts, let screen = root.presented as? AccountScreen else {
            return nil
        }
        self.init(root: root, accounts: accounts, screen: screen)
    }

    private init(root: RootController, accounts: Accounts, screen: AccountScreen) {
        self.root = root
        self.accounts = accounts
        self.screen = screen
        super.init(name: Self.restorationIdentifier)
        handle(AccountAction.self) { [unowned self] action, request throws(ActionError) in
            switch action {
            case .changePassword(let current, let new):
                try changePassword(current: current, new: new, from: request.clientAddress)
            case .logOutEverywhere:
                try logOutEverywhere()
            case .close:
                root.dismiss(animated: true) { [self] in finish() }
            }
        }
        own(screen)
    }

    /// Presents the account screen modally.
    public override func start() { root.present(screen, animated: true) }

    /// `changePassword`: the new password's rules, then the current one checked and the new one
    /// hashed and kept on the password-check threads, off the session's lock.
    private func changePassword(current: String, new: String, from clientAddress: String) throws(ActionError) {
        guard let username = root.username else {
            throw refusal(ActionError(status: 409, "The session is not logged in any more."))
        }
        do throws(CredentialError) {
            try PasswordRule.check(new)
        } catch {
            throw refusal(ActionError(status: 422, error.sentence))
        }
        let key = root.sessionID.map { "session:" + $0.text } ?? "account:" + username
        let (shell, session) = (root.services?.shell, root.sessionID)
        do throws(ActionError) {
            checkUnderWay = try accounts.runCheck(
                on: root, sessionKey: key, username: username, clientAddress: clientAddress,
                busy: checkUnderWay?.isGivenBack == false
            ) { [accounts] in
                PasswordVerdict { () throws(StoreError) in
                    guard try accounts.authenticate(username: username, password: current),
                        let hash = try? PasswordHash.make(password: new),
                        try accounts.setPasswordHash(hash, of: username)
                    else { return false }
                    // Whoever knew the old password is logged out everywhere else.
                    _ = try shell?.endSessions(ofUser: username, except: session)
                    return true
                }
            } outcome: {
                $0.outcome
            } then: { root, verdict throws(ActionError) in
                let changed = verdict == .right
                guard let flow = (root.presented as? AccountScreen)?.coordinator as? AccountCoordinator else {
                    throw ActionError(
                        status: 409,
                        changed
                            ? "The password was changed, but the session left the account screen meanwhile."
                            : "The session left the account screen while the password was checked.")
                }
                try flow.finishChange(verdict: verdict, username: username, clientAddress: clientAddress)
            }
        } catch {
            throw refusal(error)
        }
    }

    /// `logOutEverywhere`: every other session of the user ends (off the session's lock, as
    /// awaited work: the store is written), then the parent logs this one out.
    private func logOutEverywhere() throws(ActionError) {
        guard let username = root.username, let shell = root.services?.shell, let session = root.sessionID else {
            throw refusal(ActionError(status: 409, "The session is not logged in any more."))
        }
        try root.awaiting {
            try shell.endSessions(ofUser: username, except: session)
        } then: { root, _ throws(ActionError) in
            guard let flow = (root.presented as? AccountScreen)?.coordinator as? AccountCoordinator else {
                // The other sessions ended; this one logs out wherever it is.
                root.logOut()
                return
            }
            flow.didEndOtherSessions()
        }
    }

    /// Every other session ended: the parent logs this one out (or, with no delegate, it is
    /// logged out here and the screen closed).
    private func didEndOtherSessions() {
        if let delegate = parent as? AccountCoordinatorDelegate {
            delegate.accountCoordinatorDidEndOtherSessions(self)
        } else {
            root.logOut()
            root.dismiss(animated: false) { [self] in finish() }
        }
    }

    /// Applies a password change under the session's lock: done, the session gets a new id (a
    /// change of privilege); refused, nothing changes.
    private func finishChange(verdict: PasswordVerdict, username: String, clientAddress: String) throws(ActionError) {
        checkUnderWay = nil
        switch verdict {
        case .right: break
        case .wrong: throw refusal(ActionError(status: 401, "The current password is wrong."))
        case .unavailable: throw refusal(PasswordVerdict.unavailableError)
        }
        AccessLog.security("password changed", ["username": username, "client": clientAddress])
        root.rotateSessionID()
        screen.message = "Your password was changed. Your other sessions were logged out."
    }

    /// `error`, shown on the screen with the same words as the JSON answer's `error`.
    private func refusal(_ error: ActionError) -> ActionError {
        screen.message = error.message
        return error
    }
}
