#!/usr/bin/env python3
"""Writes the binary gzip and TIFF loader cases (standard library only). Expected outputs
(`*.expected.json`) are reviewed by hand and kept beside each case."""
import gzip
import io
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(sub, name, data):
    with open(os.path.join(HERE, sub, name), "wb") as f:
        f.write(data)


def gz_member(payload=b"hello\n", mtime=0, flags=0, name=None, comment=None, extra=None,
              hcrc=False, method=8):
    """A gzip member with a hand-built header (Python's gzip never writes a comment)."""
    if name is not None:
        flags |= 0x08
    if comment is not None:
        flags |= 0x10
    if extra is not None:
        flags |= 0x04
    if hcrc:
        flags |= 0x02
    head = bytes([0x1F, 0x8B, method, flags]) + struct.pack("<I", mtime) + bytes([2, 3])
    if extra is not None:
        head += struct.pack("<H", len(extra)) + extra
    if name is not None:
        head += name + b"\0"
    if comment is not None:
        head += comment + b"\0"
    if hcrc:
        import zlib
        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    body = gzip.compress(payload, mtime=0)[10:]  # deflate data + trailer of a plain member
    return head + body


def gzip_cases():
    write("gzip", "mtime_and_name.nii.gz",
          gz_member(mtime=1700000000, name=b"sub-01_T1w.nii"))
    write("gzip", "no_mtime_no_name.tsv.gz", gz_member())
    write("gzip", "comment_only.gz", gz_member(mtime=5, comment=b"made by a scanner"))
    write("gzip", "extra_name_comment_hcrc.gz",
          gz_member(mtime=42, extra=b"AB\x02\x00xy", name=b"a.tsv", comment=b"c", hcrc=True))
    write("gzip", "latin1_name.gz", gz_member(mtime=1, name="caf\u00e9.tsv".encode("latin-1")))
    write("gzip", "utf8_name.gz", gz_member(mtime=1, name="caf\u00e9.tsv".encode("utf-8")))
    write("gzip", "python_gzip_module.gz",
          b"".join([_py_gzip(b"x" * 100, "orig.nii", 1234567890)]))
    write("gzip", "not_gzip.nii.gz", b"\x5c\x01\x00\x00 not a gzip file")
    write("gzip", "empty.gz", b"")
    write("gzip", "one_byte.gz", b"\x1f")
    write("gzip", "truncated_fixed_header.gz", gz_member()[:7])
    write("gzip", "unterminated_name.gz", gz_member(name=b"x" * 50)[:40])
    write("gzip", "bad_method.gz", gz_member(method=7))
    write("gzip", "reserved_flags.gz", gz_member(flags=0x40))
    write("gzip", "extra_longer_than_file.gz", gz_member(extra=b"z" * 10)[:15])


def _py_gzip(payload, name, mtime):
    bio = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=bio, mtime=mtime) as f:
        f.write(payload)
    return bio.getvalue()


OME = """<?xml version="1.0" encoding="UTF-8"?>
<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"
     xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <Image ID="Image:0" Name="sample">
    <Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="4" SizeY="3" SizeZ="1"
            SizeC="1" SizeT="1" {attrs}>
      <Channel ID="Channel:0:0" SamplesPerPixel="1"/>
    </Pixels>
  </Image>
</OME>
"""


def tiff(desc=None, little=True, big=False, extra_entries=0, ifd_offset=None, ascii_type=2,
         count_override=None):
    """A one-strip 4x3 8-bit TIFF with an optional ImageDescription."""
    e = "<" if little else ">"
    bo = b"II" if little else b"MM"
    entries = []  # (tag, type, count, value-bytes)
    w, h = 4, 3
    pix = bytes(range(w * h))

    def short(v):
        return struct.pack(e + "H", v)

    def long_(v):
        return struct.pack(e + "I", v)

    def long8(v):
        return struct.pack(e + "Q", v)

    entries.append((256, 3, 1, short(w)))
    entries.append((257, 3, 1, short(h)))
    entries.append((258, 3, 1, short(8)))
    if desc is not None:
        raw = desc.encode() + b"\0"
        entries.append((270, ascii_type, len(raw) if count_override is None else count_override,
                        raw))
    for i in range(extra_entries):
        entries.append((40000 + i, 3, 1, short(i)))
    entries.append((273, 4, 1, None))  # StripOffsets, patched below
    entries.append((277, 3, 1, short(1)))
    entries.append((278, 3, 1, short(h)))
    entries.append((279, 4, 1, long_(len(pix)) if not big else long8(len(pix))))
    entries.sort(key=lambda t: t[0])

    header_len = 16 if big else 8
    entry_len = 20 if big else 12
    count_len = 8 if big else 2
    inline = 8 if big else 4
    ifd_at = header_len
    ifd_len = count_len + entry_len * len(entries) + (8 if big else 4)
    data_at = ifd_at + ifd_len
    blobs = b""
    strip_at = None
    out_entries = b""
    for tag, typ, count, val in entries:
        if tag == 273:
            strip_at = True
            val = b""
        vbytes = val
        if tag == 273:
            field = None
        elif len(vbytes) <= inline:
            field = vbytes.ljust(inline, b"\0")
        else:
            off = data_at + len(blobs)
            blobs += vbytes
            field = long8(off) if big else long_(off)
        out_entries += struct.pack(e + "HH", tag, typ)
        out_entries += long8(count) if big else long_(count)
        out_entries += field if field is not None else b"@STRIP@" + b"\0" * (inline - 7)
    pix_at = data_at + len(blobs)
    strip_field = (long8(pix_at) if big else long_(pix_at))
    out_entries = out_entries.replace(b"@STRIP@" + b"\0" * (inline - 7), strip_field)
    ifd = (long8(len(entries)) if big else short(len(entries))) + out_entries
    ifd += long8(0) if big else long_(0)
    if big:
        head = bo + short(43) + short(8) + short(0) + long8(ifd_at if ifd_offset is None else ifd_offset)
    else:
        head = bo + short(42) + long_(ifd_at if ifd_offset is None else ifd_offset)
    assert strip_at
    return head + ifd + blobs + pix


def tiff_cases():
    full = OME.format(attrs='PhysicalSizeX="0.5" PhysicalSizeXUnit="µm" '
                            'PhysicalSizeY="0.25" PhysicalSizeYUnit="nm" '
                            'PhysicalSizeZ="2" PhysicalSizeZUnit="mm"')
    write("tiff", "ome_classic_le.ome.tif", tiff(full))
    write("tiff", "ome_classic_be.ome.tif", tiff(full, little=False))
    write("tiff", "ome_bigtiff_le.ome.tif", tiff(full, big=True))
    write("tiff", "ome_bigtiff_be.ome.tif", tiff(full, big=True, little=False))
    write("tiff", "ome_default_units.ome.tif",
          tiff(OME.format(attrs='PhysicalSizeX="1.5" PhysicalSizeY="1.5"')))
    write("tiff", "ome_no_sizes.ome.tif", tiff(OME.format(attrs="")))
    write("tiff", "ome_prefixed_namespace.ome.tif", tiff(
        '<?xml version="1.0"?><ome:OME xmlns:ome="http://www.openmicroscopy.org/Schemas/OME/2016-06">'
        '<ome:Image ID="Image:0"><ome:Pixels ID="Pixels:0" PhysicalSizeX="3e-1" '
        'PhysicalSizeXUnit="µm"/></ome:Image></ome:OME>'))
    write("tiff", "ome_escaped_unit.ome.tif", tiff(OME.format(
        attrs='PhysicalSizeX="7" PhysicalSizeXUnit="&#181;m"')))
    write("tiff", "plain_description.tif", tiff("ImageJ=1.53\nimages=1\n"))
    write("tiff", "inline_short_description.tif", tiff("abc"))
    write("tiff", "no_description.tif", tiff(None))
    write("tiff", "malformed_xml.ome.tif", tiff("<OME><Pixels PhysicalSizeX='1'"))
    write("tiff", "many_entries.tif", tiff(OME.format(attrs='PhysicalSizeX="2"'),
                                          extra_entries=300))
    write("tiff", "description_wrong_type.tif", tiff(OME.format(attrs='PhysicalSizeX="2"'),
                                                    ascii_type=3))
    write("tiff", "description_count_past_end.tif",
          tiff(OME.format(attrs='PhysicalSizeX="2"'), count_override=10 ** 9))
    write("tiff", "ifd_offset_past_end.tif", tiff(full, ifd_offset=10 ** 9))
    write("tiff", "truncated_before_description.tif", tiff(full)[:120])
    write("tiff", "not_tiff.tif", b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    write("tiff", "bad_version.tif", b"II" + struct.pack("<H", 44) + b"\0" * 12)
    write("tiff", "truncated_header.tif", b"II*")
    write("tiff", "bigtiff_bad_bytesize.tif", b"II" + struct.pack("<HHHQ", 43, 4, 0, 16))
    write("tiff", "empty.tif", b"")


if __name__ == "__main__":
    gzip_cases()
    tiff_cases()
