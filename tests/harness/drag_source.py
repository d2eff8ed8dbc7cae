#!/usr/bin/python3
"""A tiny GTK3 drag source offering files as text/uri-list, for real drag-and-drop tests.

Usage: drag_source.py X Y FILE...   (window placed at X,Y; prints "ready" when shown)
Exits after the drag ends.
"""
import sys
from pathlib import Path

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

x, y = int(sys.argv[1]), int(sys.argv[2])
uris = [Path(p).resolve().as_uri() for p in sys.argv[3:]]

win = Gtk.Window(title="casebook-drag-source")
win.set_default_size(160, 160)
win.move(x, y)
button = Gtk.Button(label="drag")
button.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
button.drag_source_add_uri_targets()


def on_get(_widget, _ctx, data, _info, _time):
    data.set_uris(uris)


def on_end(*_args):
    GLib.timeout_add(200, Gtk.main_quit)


button.connect("drag-data-get", on_get)
button.connect("drag-end", on_end)
win.add(button)
win.connect("map-event", lambda *_: print("ready", flush=True))
win.show_all()
GLib.timeout_add_seconds(60, Gtk.main_quit)
Gtk.main()
