"""The runtime: the only layer with trio and pyzmq (peer node, zmq mesh, discovery, log files).

It moves bytes and clocks for the pure protocol core; see DESIGN.md §1 and §7.
:mod:`p2p_nertz.runtime.zmqtrio` puts pyzmq sockets on trio.
"""
