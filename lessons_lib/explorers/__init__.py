"""explorers"""
