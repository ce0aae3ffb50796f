#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A TCP pass-through in front of a test registry (TLS stays end to end):
#   tcp_proxy.py PORT_FILE TARGET_PORT pass|cut:BYTES|stall
# pass:  forwards both ways, counting bytes sent to clients (written to
#        PORT_FILE.bytes on exit).
# cut:N: after N bytes sent to clients, drops every connection and stops
#        listening: the registry is gone mid-download.
# stall: accepts and never answers: a registry that hangs.
import asyncio, os, signal, sys

port_file, target_port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
limit = int(mode.split(":")[1]) if mode.startswith("cut:") else None
sent = 0
writers = []
done = asyncio.Event()

async def pipe(reader, writer, to_client):
    global sent
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if to_client and limit is not None:
                data = data[: max(0, limit - sent)]
            writer.write(data)
            await writer.drain()
            if to_client:
                sent += len(data)
                if limit is not None and sent >= limit:
                    done.set()
                    break
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()

async def handle(client_reader, client_writer):
    writers.append(client_writer)
    if mode == "stall":
        await done.wait()
        return
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
    writers.append(up_writer)
    try:
        await asyncio.gather(pipe(client_reader, up_writer, False), pipe(up_reader, client_writer, True))
    except asyncio.CancelledError:
        pass  # the cut: connections aborted on purpose

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, done.set)
    await done.wait()
    server.close()
    for w in writers:
        w.transport.abort()
    with open(port_file + ".bytes", "w") as f:
        f.write(str(sent))

asyncio.run(main())
