"""osmosis"""
