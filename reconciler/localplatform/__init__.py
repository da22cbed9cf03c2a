"""localplatform"""
