import type { Socket } from "node:net"

/**
 * Resets a client's connection (a TCP RST, as a broken network or a restarting load balancer gives).
 * A TLS socket cannot reset itself: its TCP socket beneath is reset, which Node keeps as `_parent`.
 */
export const resetConnection = (socket: Socket): void => {
  const beneath = (socket as Socket & { readonly _parent?: unknown })._parent
  if (beneath !== null && typeof beneath === "object" && "resetAndDestroy" in beneath)
    (beneath as Socket).resetAndDestroy()
  else socket.resetAndDestroy()
  socket.destroy()
}
