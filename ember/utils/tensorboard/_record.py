"""TFRecord framing, the container of TensorBoard event files, and its checksum.

Each record is

    uint64 length (little-endian) | uint32 masked_crc32c(those 8 bytes) | data | uint32 masked_crc32c(data)

where crc32c is CRC-32 with the Castagnoli polynomial and the mask rotates the CRC right
by 15 bits and adds a constant (so that a CRC of data containing CRCs stays well mixed).
"""
from __future__ import annotations

import struct

__all__ = ["crc32c", "masked_crc32c", "encode_record", "read_records"]


def _make_table() -> tuple:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # the reflected Castagnoli polynomial
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """The CRC-32C of data (continuing from crc, the CRC of what came before).

    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    crc ^= 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """crc32c(data) rotated right by 15 bits plus 0xA282EAD8, modulo 2**32 (TFRecord's mask)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """data framed as one TFRecord."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


def read_records(path):
    """The records of a TFRecord file, as bytes, checking both checksums of each. Raises
    ValueError for a corrupt or truncated record."""
    with open(path, "rb") as f:
        blob = f.read()
    pos = 0
    while pos < len(blob):
        if pos + 12 > len(blob):
            raise ValueError(f"{path}: truncated record header at byte {pos}")
        header = blob[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
        if header_crc != masked_crc32c(header):
            raise ValueError(f"{path}: bad length checksum at byte {pos}")
        end = pos + 12 + length
        if end + 4 > len(blob):
            raise ValueError(f"{path}: truncated record at byte {pos}")
        data = blob[pos + 12:end]
        (data_crc,) = struct.unpack("<I", blob[end:end + 4])
        if data_crc != masked_crc32c(data):
            raise ValueError(f"{path}: bad data checksum at byte {pos}")
        yield data
        pos = end + 4
