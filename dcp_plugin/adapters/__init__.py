"""The hosts' doors: the pluggy adapter, the OpenCode bridge and the provider formats, all above the commands."""
