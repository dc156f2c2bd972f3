"""The DamExchange protocol (DXP) over TCP: Pedina as a listening Follower.

The Initiator (a GUI, an arbiter, pydraughts' ``DXPEngine``) connects, sends a
GAMEREQ and gets a GAMEACC; then MOVE messages strictly alternate until one
side, when it is to move, sends a GAMEEND, which the other confirms with one.
Another GAMEREQ may then start a new game on the same connection. One concern
a module:

- :mod:`~pedina.protocol.dxp.messages`: the messages as values, their text, the
  NUL framing, and the mapping to our positions and moves;
- :mod:`~pedina.protocol.dxp.follower`: the Follower's game flow and clock over
  a search session;
- :mod:`~pedina.protocol.dxp.server`: the TCP server and the ``pedina dxp`` command.
"""

from pedina.protocol.dxp.server import dxp

__all__ = ["dxp"]
