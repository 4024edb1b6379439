import AppShellConcurrency

/// A mistake in what an app's coordinators declare (`Coordinator.shows`, its routes): one line
/// naming the coordinator and the screen, for the developer.
///
/// Found when the server is built (`ShellServer.init` throws it, the `appshell` command exits 2
/// with it, as for a bad configuration) for what the types alone say, and while serving for what
/// only running code shows: a screen shown with an owner (`Coordinator.own(_:)`) that does not
/// declare it. That request fails — 500, its changes dropped, the message logged — when the
/// session's snapshot would be kept with the screen, which a restart could not make again.
public struct DeclarationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The explanation, e.g. `NotesCoordinator owns AboutScreen ("about") but does not declare it in shows`.
    public let description: String

    /// An error saying `description`, on one line.
    package init(_ description: String) {
        self.description = description.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

extension ShellApplication {
    /// Checks what the app's coordinators declare, from the app coordinator's type, as far as the
    /// types tell: every entry of every reachable `shows` is a `RestorableScreen`, a
    /// `RestorableCoordinator` or a `Route`; no two screen types share a name, nor two coordinator
    /// types a `restorationIdentifier`; each route's source screen is declared by its coordinator
    /// or one that coordinator shows (else the route is never offered); the first screen is
    /// declared by the app coordinator, which owns it. `ShellServer` calls it before it opens the
    /// store.
    public func checkDeclarations() throws(DeclarationError) {
        try DeclarationCheck.check(RootCoordinator.self, firstScreen: makeFirstScreen())
    }
}

/// The checks of `ShellApplication.checkDeclarations()` and of the owners of the screens shown.
enum DeclarationCheck {
    /// See `ShellApplication.checkDeclarations()`.
    static func check(_ root: Coordinator.Type, firstScreen: ViewController) throws(DeclarationError) {
        var screenNames: [String: ViewController.Type] = [:]
        var coordinatorNames: [String: any RestorableCoordinator.Type] = [:]
        for coordinator in reachable(from: root) {
            for shown in coordinator.shows {
                if let route = shown as? any DeclaredRoute.Type {
                    guard screens(declaredFrom: coordinator).contains(ObjectIdentifier(route.source)) else {
                        throw DeclarationError(
                            "\(coordinator)'s route to \(route.destination) is offered on \(route.source), which "
                                + "neither \(coordinator) nor a coordinator it shows declares in `shows`")
                    }
                }
                if let screen = RestorationRegistry.screenType(of: shown) {
                    let name = screen.init().name
                    if let other = screenNames[name], ObjectIdentifier(other) != ObjectIdentifier(screen) {
                        throw DeclarationError(
                            "\(other) and \(screen) are both named \"\(name)\": a restart could not tell them apart")
                    }
                    screenNames[name] = screen
                } else if let child = shown as? any RestorableCoordinator.Type {
                    let name = child.restorationIdentifier
                    if let other = coordinatorNames[name], ObjectIdentifier(other) != ObjectIdentifier(child) {
                        throw DeclarationError(
                            "\(other) and \(child) are both restored as \"\(name)\": a restart could not tell them apart"
                        )
                    }
                    coordinatorNames[name] = child
                } else {
                    throw DeclarationError(
                        "\(coordinator) declares \(shown) in `shows`, which is no RestorableScreen, "
                            + "RestorableCoordinator or Route: a restart could not make it again")
                }
            }
        }
        let first = (firstScreen as? NavigationController)?.viewControllers ?? [firstScreen]
        let declared = Set(root.shows.compactMap { RestorationRegistry.screenType(of: $0).map(ObjectIdentifier.init) })
        for screen in first where !declared.contains(ObjectIdentifier(type(of: screen))) {
            throw DeclarationError(
                "\(root) shows \(type(of: screen)) (\"\(screen.name)\") first but does not declare it in `shows`")
        }
    }

    /// `root` and every coordinator type it shows, directly or through others, each once.
    static func reachable(from root: Coordinator.Type) -> [Coordinator.Type] {
        var found: [Coordinator.Type] = []
        var seen = Set<ObjectIdentifier>()
        var pending: [Coordinator.Type] = [root]
        while let coordinator = pending.popLast() {
            guard seen.insert(ObjectIdentifier(coordinator)).inserted else { continue }
            found.append(coordinator)
            pending += coordinator.shows.compactMap { $0 as? any RestorableCoordinator.Type }
        }
        return found
    }

    /// The screen types `coordinator` declares, or a coordinator it shows, directly or not.
    static func screens(declaredFrom coordinator: Coordinator.Type) -> Set<ObjectIdentifier> {
        Set(RestorationRegistry.screenTypes(shownBy: coordinator).map(ObjectIdentifier.init))
    }

    /// Whether a coordinator has owned a screen its type does not declare, in this process: until
    /// one has, the screens shown need no check when a snapshot is kept (`checkOwners` walked
    /// them and cast each at every action: 1 750 of its instructions, callgrind). Set by
    /// `noteOwner`, never cleared.
    static let undeclaredOwnerSeen = Locked(false)

    /// Whether each coordinator type declares each screen type it owned, worked out once per pair.
    private static let declaredPairs = Locked<[OwnerPair: Bool]>([:])

    /// A coordinator type and a screen type.
    private struct OwnerPair: Hashable {
        let coordinator: ObjectIdentifier
        let screen: ObjectIdentifier
    }

    /// Notes that a `coordinator` owns a `screen`: when its `shows` does not declare the screen's
    /// type, every snapshot kept from now on has its owners checked (`checkOwners`).
    static func noteOwner(_ coordinator: Coordinator.Type, owns screen: ViewController.Type) {
        let pair = OwnerPair(coordinator: ObjectIdentifier(coordinator), screen: ObjectIdentifier(screen))
        if let declared = declaredPairs.withLock({ $0[pair] }) {
            if !declared { undeclaredOwnerSeen.withLock { $0 = true } }
            return
        }
        let declared = coordinator.shows.contains {
            RestorationRegistry.screenType(of: $0).map(ObjectIdentifier.init) == pair.screen
        }
        declaredPairs.withLock { $0[pair] = declared }
        if !declared { undeclaredOwnerSeen.withLock { $0 = true } }
    }

    /// Throws when a screen `root` shows has an owner whose type does not declare the screen's
    /// (`owners`: the coordinator types that declare each screen type): the snapshot about to be
    /// kept could not be restored as it is. A screen without an owner is not checked.
    static func checkOwners(
        of root: RootController, _ owners: [ObjectIdentifier: Set<ObjectIdentifier>]
    ) throws(DeclarationError) {
        func check(_ screen: ViewController) throws(DeclarationError) {
            guard let owner = (screen as? any OwnedScreen)?.owner,
                owners[ObjectIdentifier(type(of: screen))]?.contains(ObjectIdentifier(type(of: owner))) != true
            else { return }
            throw DeclarationError(
                "\(type(of: owner)) owns \(type(of: screen)) (\"\(screen.name)\") but does not declare it in "
                    + "`shows`: a restart could not make it again")
        }
        if let navigation = root.navigation {
            for screen in navigation.viewControllers { try check(screen) }
        } else {
            try check(root.child)
        }
        if let presented = root.presented { try check(presented) }
    }
}
